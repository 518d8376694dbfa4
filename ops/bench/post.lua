-- wrk script: POST BENCH_BODY (JSON) to the URL, as a webhook sender posts an event (one request at a time per connection).
function init(args)
  body = os.getenv("BENCH_BODY")
end

function request()
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json", ["Backoffice-Event-Type"] = "good.low_stock" }, body)
end

done = function(summary, latency, requests)
  io.write(string.format("BENCH p50_ms=%.2f p99_ms=%.2f non2xx=%d\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.errors.status))
end
