-- wrk script: GET BENCH_PATH with the token BENCH_TOKEN (a list page, a leaderboard, a probe).
function init(args)
  token = os.getenv("BENCH_TOKEN")
  path = os.getenv("BENCH_PATH")
end

function request()
  return wrk.format("GET", path, { ["Authorization"] = "Bearer " .. token })
end

done = function(summary, latency, requests)
  io.write(string.format("BENCH p50_ms=%.2f p99_ms=%.2f non2xx=%d\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.errors.status))
end
