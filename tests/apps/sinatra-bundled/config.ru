require File.dirname(__FILE__) + "/app.rb"
run UserApp
