-- wrk script: every request puts a unique key into etcd through its v3 JSON gateway.
--   wrk -t2 -c64 -d10s --latency -s etcd_put.lua http://127.0.0.1:2379 -- PREFIX
-- Keys are PREFIX-THREAD-COUNTER (base64, as the gateway wants), values "v".

local threads = {}

function setup(thread)
   thread:set("id", #threads)
   table.insert(threads, thread)
end

local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

local function base64(s)
   local out = {}
   for i = 1, #s, 3 do
      local a, b, c = s:byte(i, i + 2)
      local n = a * 65536 + (b or 0) * 256 + (c or 0)
      local chars = 2 + (b and 1 or 0) + (c and 1 or 0)
      for k = 1, 4 do
         if k <= chars then
            local v = math.floor(n / 2 ^ (6 * (4 - k))) % 64
            out[#out + 1] = alphabet:sub(v + 1, v + 1)
         else
            out[#out + 1] = "="
         end
      end
   end
   return table.concat(out)
end

function init(args)
   prefix = args[1] or "w"
   counter = 0
   value = base64("v")
   wrk.method = "POST"
   wrk.headers["Content-Type"] = "application/json"
end

function request()
   counter = counter + 1
   local key = base64(string.format("%s-%d-%d", prefix, id, counter))
   local body = string.format('{"key":"%s","value":"%s"}', key, value)
   return wrk.format(nil, "/v3/kv/put", nil, body)
end
