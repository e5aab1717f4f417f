# Usage: ruby probe.rb URL N -- N GETs with Net::HTTP, a new connection each; prints the number answered 200.
require 'net/http'
url = URI(ARGV[0])
n = Integer(ARGV[1])
ok = 0
n.times { ok += 1 if Net::HTTP.get_response(url).code == '200' }
puts ok
