require "sinatra"
get("/") { "hello" }
run Sinatra::Application
