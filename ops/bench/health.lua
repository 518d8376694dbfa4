-- wrk script: a customer's health profile, each request another customer of BENCH_IDS (the profiled ones).
-- BENCH_MODE=read: GET …/health-profile?purpose=support_request (each read records an access event).
-- BENCH_MODE=sync: PUT …/health-profile with a weight that changes every request (a new version each).
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
  size = per
  next_index = 0
  token = os.getenv("BENCH_TOKEN")
  mode = os.getenv("BENCH_MODE") or "read"
end

function request()
  local id = ids[first + (next_index % size) + 1]
  next_index = next_index + 1
  local path = "/v1/customers/" .. id .. "/health-profile"
  if mode == "read" then
    return wrk.format("GET", path .. "?purpose=support_request", { ["Authorization"] = "Bearer " .. token })
  end
  local weight = string.format("%.1f", 60 + (next_index % 400) / 10)
  return wrk.format("PUT", path, { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" },
    '{"height_cm":170,"weight_kg":' .. weight .. ',"birth_year":1985,"sex":"female","weight_goal":"keep",' ..
    '"daily_calorie_goal":2000,"activity_level":"moderate"}')
end

done = function(summary, latency, requests)
  io.write(string.format("BENCH p50_ms=%.2f p99_ms=%.2f non2xx=%d\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.errors.status))
end
