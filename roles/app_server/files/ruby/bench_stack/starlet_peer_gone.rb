# Loaded by rackup after prefork_engine's example/starlet.rb (Rack::Handler::Starlet, 0.0.7).
#
# Its write loop rescues neither EPIPE nor ECONNRESET: a client (nginx) that has gone before the answer is
# written kills the worker, which prefork_engine respawns only after a 1 s pause. Each load tool connection cut
# at the end of a cell or on a timeout then costs a worker-second, and under load the stall feeds itself (more
# timeouts). Perl's Starlet drops such a connection and goes on: so does this.
#
# Its accept loop marks a worker as free to exit (@can_exit) until the request's first bytes are read, so a
# TERM (start_server stopping the old generation after a SIGHUP) that lands between accept and that read exits
# the worker with an accepted connection: the client gets a reset (the ruby-starlet scenario's hot-restart
# test saw curl exit 56 once in about ten runs). Here a connection is the worker's from the moment it is
# handed over, and a TERM that came meanwhile ends the worker once the answer is written, as Perl's does.
module BenchStack
  module StarletPeerGone
    def handle_connection(env, connection, app)
      @can_exit = false
      super
    rescue Errno::EPIPE, Errno::ECONNRESET
      nil
    ensure
      if @term_received.to_i > 0
        begin
          connection.close
        rescue IOError, SystemCallError
          nil
        end
        exit!(true)
      end
    end
  end
end

Rack::Handler::Starlet.prepend(BenchStack::StarletPeerGone)
