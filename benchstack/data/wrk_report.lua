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

local threshold_ms = tonumber(os.getenv("BENCH_STACK_THRESHOLD_MS") or "")
local connections = tonumber(os.getenv("BENCH_STACK_CONNECTIONS") or "")

done = function(summary, latency, requests)
   local threshold_us = threshold_ms and threshold_ms * 1000 or nil
   local values, counts = {}, {}
   local samples, over_corrected = 0, 0
   for i = 1, #latency do
      local value, count = latency(i)
      values[#values + 1] = value
      counts[value] = count
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
      'BENCH-STACK-WRK-REPORT {"schema":"bench-stack/wrk-report/v1","threshold_ms":%s,'
         .. '"over_threshold":%s,"recorded":%d,"over_threshold_corrected":%s,"samples":%d,'
         .. '"correction_interval_us":%s,"requests":%d,"duration_us":%d,'
         .. '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},'
         .. '"latency_us":{"min":%d,"max":%d,"mean":%.3f,"stdev":%.3f,%s}}\n',
      threshold_ms and string.format("%.17g", threshold_ms) or "null",
      (threshold_us and expected) and tostring(over) or "null",
      recorded,
      threshold_us and tostring(over_corrected) or "null",
      samples,
      expected and tostring(expected) or "null",
      summary.requests, summary.duration,
      e.connect, e.read, e.write, e.status, e.timeout,
      latency.min, latency.max, latency.mean, latency.stdev, table.concat(parts, ",")))
end
