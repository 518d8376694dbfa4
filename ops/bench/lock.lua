-- wrk script: POST /v1/customers/{id}/lock, every request on a different account.
-- Each wrk thread takes its own slice of the ids file; requests walk it in order.
local ids = {}
for line in io.lines(os.getenv("BENCH_IDS")) do ids[#ids + 1] = line end
local threads = tonumber(os.getenv("BENCH_THREADS") or "2")
local counter = 0

function setup(thread)
  thread:set("slice", counter)
  counter = counter + 1
end

function init(args)
  local per = math.floor(#ids / threads)
  first = slice * per
  next_index = 0
  token = os.getenv("BENCH_TOKEN")
end

function request()
  local id = ids[first + next_index + 1]
  next_index = next_index + 1
  return wrk.format("POST", "/v1/customers/" .. id .. "/lock",
    { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" },
    '{"reason":"benchmark"}')
end

done = function(summary, latency, requests)
  io.write(string.format("BENCH p50_ms=%.2f p99_ms=%.2f non2xx=%d\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.errors.status))
end
