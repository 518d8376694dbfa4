-- wrk script: GET /v1/customers?limit=50 (the first page of the account list).
function init(args)
  token = os.getenv("BENCH_TOKEN")
end

function request()
  return wrk.format("GET", "/v1/customers?limit=50", { ["Authorization"] = "Bearer " .. token })
end

done = function(summary, latency, requests)
  io.write(string.format("BENCH p50_ms=%.2f p99_ms=%.2f non2xx=%d\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.errors.status))
end
