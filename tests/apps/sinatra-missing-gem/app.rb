require "sinatra/base"

# A blog post's Sinatra app: a class of its own, loaded by config.ru.
class UserApp < Sinatra::Base
  get "/" do
    "Hello World! I am a user's Sinatra app!"
  end

  get "/hello/:name" do
    "Hello #{params[:name]}!"
  end

  # Which gem folders the server process loaded thin, puma and sinatra from (the bundle's, not the system's).
  get "/gems" do
    content_type "text/plain"
    %w[sinatra thin puma].map { |g| "#{g} #{Gem.loaded_specs[g]&.full_gem_path}" }.join("\n")
  end
end
