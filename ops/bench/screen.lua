-- wrk script: POST /v1/moderation/screen, the app screening a clean 2,000-character post (the
-- common case: allowed, nothing written), each request another content id.
local counter = 0
local sentence = "Week three of the plan and my long run is finally over ten kilometres, cafe au lait after. "
local text = string.rep(sentence, 23):sub(1, 2000)

function setup(thread)
  thread:set("slice", counter)
  counter = counter + 1
end

function init(args)
  token = os.getenv("BENCH_TOKEN")
  next_index = 0
end

function request()
  next_index = next_index + 1
  return wrk.format("POST", "/v1/moderation/screen",
    { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" },
    '{"content_kind":"post","content_id":"bench-' .. slice .. '-' .. next_index ..
    '","author_id":"00000000-0000-4000-8000-000000000001","text":"' .. text .. '"}')
end

done = function(summary, latency, requests)
  io.write(string.format("BENCH p50_ms=%.2f p99_ms=%.2f non2xx=%d\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.errors.status))
end
