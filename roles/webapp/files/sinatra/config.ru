require_relative 'app'
run HelloApp
