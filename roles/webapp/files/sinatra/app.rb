# The seed's Sinatra hello app: GET / and GET /hello/:name.
require 'sinatra/base'

class HelloApp < Sinatra::Base
  # Per-request logging would be measured along with the app.
  set :logging, false

  get '/' do
    'Hello World! I am sinatra!'
  end

  get '/hello/:name' do
    "Hello #{params[:name]}!"
  end
end
