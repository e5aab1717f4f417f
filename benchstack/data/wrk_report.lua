-- bench-stack: wrk done() report. Prints one line after wrk's own report:
--   BENCH-STACK-WRK-REPORT {json}
-- Environment: BENCH_STACK_THRESHOLD_MS (the experiment's threshold), BENCH_STACK_CONNECTIONS (wrk -c).
-- The request itself is left to wrk (no request/response functions), so the load is unchanged.
--
-- wrk 4 corrects its latency histogram for coordinated omission before done() sees it (stats_correct in
-- src/stats.c: for every recorded value v, it adds the same count at v - e, v - 2e, ... while above e, where
-- e = runtime_us / (requests / connections)). This script undoes that exactly (highest values first) to count
-- the requests really slower than the threshold ("over_threshold"), and also reports the count in the
-- corrected histogram ("over_threshold_corrected", of "samples").
--
-- It also prints the whole corrected histogram ("histogram": [[value_us, count], ...], ascending), each value
-- floored to 9 significant bits (exact below 512 us, within 0.4 % above) so that a wide spread stays a
-- few thousand pairs at most: the same bucketing as benchstack/results/distribution.py, which stores it in the cell.

--
-- Reading the histogram: wrk's latency(i) scans the whole histogram from its minimum on every call
-- (stats_value_at in src/stats.c), so walking all distinct values that way costs values x range; with a
-- wide spread (seconds) it ran past the cell's time bound. wrk runs on LuaJIT, so the script reads wrk's
-- stats struct (uint64 count, limit, min, max, data[limit]) once through the FFI, after checking that it
-- agrees with what wrk's Lua API says (min, max, number of distinct values). If it does not (another wrk
-- layout), it falls back to latency(i) when that is cheap enough, else reports no exact count (the
-- caller then estimates from the corrected histogram, or leaves over_threshold unmeasured).

local threshold_ms = tonumber(os.getenv("BENCH_STACK_THRESHOLD_MS") or "")
local connections = tonumber(os.getenv("BENCH_STACK_CONNECTIONS") or "")
-- latency(i) calls times the histogram range above which the fallback is skipped.
local FALLBACK_BUDGET = 2e7
local EXACT_BELOW = 512 -- 2^9 (9 significant bits): values below are kept exactly

local function bucket(v)
   local width = 1
   while v >= EXACT_BELOW do
      v = math.floor(v / 2)
      width = width * 2
   end
   return v * width
end

-- The histogram as JSON pairs, bucketed (values ascending, so equal buckets are adjacent).
local function histogram_json(values, counts)
   local sorted = {}
   for i, v in ipairs(values) do
      sorted[i] = v
   end
   table.sort(sorted)
   local parts, last, sum = {}, nil, 0
   for _, v in ipairs(sorted) do
      local b = bucket(v)
      if b ~= last and last ~= nil then
         parts[#parts + 1] = string.format("[%.0f,%.0f]", last, sum)
         sum = 0
      end
      last = b
      sum = sum + counts[v]
   end
   if last ~= nil then
      parts[#parts + 1] = string.format("[%.0f,%.0f]", last, sum)
   end
   return "[" .. table.concat(parts, ",") .. "]"
end

local function buckets_ffi(latency)
   local ok, ffi = pcall(require, "ffi")
   if not ok then
      return nil
   end
   local ok2, values, counts = pcall(function()
      local words = ffi.cast("uint64_t **", latency)[0]
      local limit, min, max = tonumber(words[1]), tonumber(words[2]), tonumber(words[3])
      if min ~= latency.min or max ~= latency.max or max >= limit then
         return nil
      end
      local vs, cs = {}, {}
      for v = min, max do
         local c = tonumber(words[4 + v])
         if c > 0 then
            vs[#vs + 1] = v
            cs[v] = c
         end
      end
      if #vs ~= #latency then
         return nil
      end
      return vs, cs
   end)
   if ok2 then
      return values, counts
   end
   return nil
end

local function buckets_api(latency)
   if #latency * (latency.max - latency.min + 1) > FALLBACK_BUDGET then
      return nil
   end
   local vs, cs = {}, {}
   for i = 1, #latency do
      local value, count = latency(i)
      vs[#vs + 1] = value
      cs[value] = count
   end
   return vs, cs
end

done = function(summary, latency, requests)
   local threshold_us = threshold_ms and threshold_ms * 1000 or nil
   local read = "ffi"
   local values, counts = buckets_ffi(latency)
   if not values then
      read = "api"
      values, counts = buckets_api(latency)
   end
   local exact = values ~= nil
   if not exact then
      read = "none"
   end
   values, counts = values or {}, counts or {}
   local samples, over_corrected = 0, 0
   for _, value in ipairs(values) do
      local count = counts[value]
      samples = samples + count
      if threshold_us and value > threshold_us then
         over_corrected = over_corrected + count
      end
   end
   -- undo the correction
   local expected = nil
   if connections and connections > 0 then
      local per_connection = math.floor(summary.requests / connections)
      if per_connection > 0 then
         expected = math.floor(summary.duration / per_connection)
      end
   end
   local synthetic, recorded, over = {}, 0, 0
   for i = #values, 1, -1 do
      local v = values[i]
      local original = counts[v] - (synthetic[v] or 0)
      if expected and expected > 0 and original > 0 then
         local m = v - expected
         while m > expected do
            synthetic[m] = (synthetic[m] or 0) + original
            m = m - expected
         end
      end
      recorded = recorded + original
      if threshold_us and v > threshold_us then
         over = over + original
      end
   end
   local parts = {}
   for _, p in ipairs({ 50, 75, 90, 99, 99.9 }) do
      parts[#parts + 1] = string.format('"p%s":%d', tostring(p), latency:percentile(p))
   end
   local e = summary.errors
   io.write(string.format(
      'BENCH-STACK-WRK-REPORT {"schema":"bench-stack/wrk-report/v1","histogram_read":"%s","threshold_ms":%s,'
         .. '"over_threshold":%s,"recorded":%s,"over_threshold_corrected":%s,"samples":%s,'
         .. '"correction_interval_us":%s,"requests":%d,"duration_us":%d,'
         .. '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},'
         .. '"latency_us":{"min":%d,"max":%d,"mean":%.3f,"stdev":%.3f,%s},"histogram":%s}\n',
      read,
      threshold_ms and string.format("%.17g", threshold_ms) or "null",
      (threshold_us and expected and exact) and tostring(over) or "null",
      exact and tostring(recorded) or "null",
      (threshold_us and exact) and tostring(over_corrected) or "null",
      exact and tostring(samples) or "null",
      expected and tostring(expected) or "null",
      summary.requests, summary.duration,
      e.connect, e.read, e.write, e.status, e.timeout,
      latency.min, latency.max, latency.mean, latency.stdev, table.concat(parts, ","),
      exact and histogram_json(values, counts) or "null"))
end
