-- wrk script: POST one AdmissionReview body over and over; without BODY_FILE, GET the URL
-- (the server's own /healthz, or nginx's static answer: the TLS + HTTP floor).
--   wrk -s bench/review.lua https://127.0.0.1:PORT/mutate -- BODY_FILE
--   wrk -s bench/review.lua https://127.0.0.1:PORT/healthz
-- Prints one machine-readable RESULT line at the end (bench/run.sh reads it).
function init(args)
  if args[1] == nil then return end
  local f = assert(io.open(args[1], "rb"), "cannot open body file " .. tostring(args[1]))
  wrk.body = f:read("*a")
  f:close()
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d duration_us=%d p50_us=%d p99_us=%d errors=%d non2xx=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout, e.status))
end
