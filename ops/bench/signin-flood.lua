-- wrk script: junk console sign-ins (POST /console/sign-in), each for a new random email with a
-- wrong password, as a flood without an account would send them. Prints the answers by status.
local counts = {}
function init(args)
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
end

function request()
  local body = "email=junk" .. math.random(1, 1000000000) .. "%40flood.example&password=not+the+password&next=%2Fconsole%2Fhome"
  return wrk.format("POST", "/console/sign-in", { ["Content-Type"] = "application/x-www-form-urlencoded" }, body)
end

done = function(summary, latency, requests)
  io.write(string.format("BENCH p50_ms=%.2f p99_ms=%.2f non2xx=%d requests=%d\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.errors.status, summary.requests))
end
