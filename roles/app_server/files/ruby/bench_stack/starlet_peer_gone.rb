# Loaded by rackup after prefork_engine's example/starlet.rb (Rack::Handler::Starlet, 0.0.7). Its write loop
# rescues neither EPIPE nor ECONNRESET: a client (nginx) that has gone before the answer is written kills the
# worker, which prefork_engine respawns only after a 1 s pause. Each load tool connection cut at the end of a
# cell or on a timeout then costs a worker-second, and under load the stall feeds itself (more timeouts).
# Perl's Starlet drops such a connection and goes on: so does this.
module BenchStack
  module StarletPeerGone
    def handle_connection(env, connection, app)
      super
    rescue Errno::EPIPE, Errno::ECONNRESET
      nil
    end
  end
end

Rack::Handler::Starlet.prepend(BenchStack::StarletPeerGone)
