-- wrk script: GET BENCH_PATH with the console session cookie BENCH_COOKIE (a console page, signed in).
function init(args)
  cookie = os.getenv("BENCH_COOKIE")
  path = os.getenv("BENCH_PATH")
end

function request()
  return wrk.format("GET", path, { ["Cookie"] = cookie })
end

done = function(summary, latency, requests)
  io.write(string.format("BENCH p50_ms=%.2f p99_ms=%.2f non2xx=%d\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.errors.status))
end
