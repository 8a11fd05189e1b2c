-- wrk script: every request creates a convoy resource with a unique name (one log entry each).
--   CONVOY_TOKEN=$(cat admin-token) wrk -t2 -c64 -d10s --latency \
--     -s convoy_create.lua http://127.0.0.1:7700 -- PREFIX
-- PREFIX (default "w") keeps names unique across runs; each thread adds its number and a counter.

local threads = {}

function setup(thread)
   thread:set("id", #threads)
   table.insert(threads, thread)
end

function init(args)
   prefix = args[1] or "w"
   counter = 0
   wrk.method = "POST"
   wrk.headers["Content-Type"] = "application/json"
   local token = os.getenv("CONVOY_TOKEN")
   if token and token ~= "" then
      wrk.headers["Authorization"] = "Bearer " .. token
   end
end

function request()
   counter = counter + 1
   local body = string.format('{"name":"%s-%d-%d"}', prefix, id, counter)
   return wrk.format(nil, "/v1/resources", nil, body)
end
