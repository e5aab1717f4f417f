# The mruby-file app: mod_mruby runs every .rb file as a script (AddHandler mruby-script .rb), reading and
# compiling it on every request.
r = Apache::Request.new
r.content_type = "text/plain"
Apache.rputs "Hello World! I am mruby-file!"
