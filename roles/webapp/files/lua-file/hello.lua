-- The lua-file app: mod_lua runs handle() for every request to a .lua file (AddHandler lua-script .lua).
-- With LuaCodeCache never, Apache reads and compiles this file on every request.
function handle(r)
    r.content_type = "text/plain"
    r:puts("Hello World! I am lua-file!")
    return apache2.OK
end
