-- wrk script: sign in to the console (POST /console/sign-in) with BENCH_EMAIL and BENCH_PASSWORD,
-- each request a new session (bcrypt at the service's cost). A success is a 303 to the console.
function init(args)
  local function encode(text)
    return (text:gsub("[^%w%-_%.~]", function(c) return string.format("%%%02X", string.byte(c)) end))
  end
  body = "email=" .. encode(os.getenv("BENCH_EMAIL")) .. "&password=" .. encode(os.getenv("BENCH_PASSWORD")) .. "&next=%2Fconsole%2Fhome"
end

function request()
  return wrk.format("POST", "/console/sign-in", { ["Content-Type"] = "application/x-www-form-urlencoded" }, body)
end

done = function(summary, latency, requests)
  io.write(string.format("BENCH p50_ms=%.2f p99_ms=%.2f non2xx=%d\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.errors.status))
end
