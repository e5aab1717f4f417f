<?php
// The PHP hello app, a front controller: answers like the Sinatra app (GET / and GET /hello/:name).
$path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
header('Content-Type: text/html;charset=utf-8');
if ($path === '/') {
    echo 'Hello World! I am php!';
} elseif (preg_match('#^/hello/([^/]+)$#', $path, $m)) {
    echo 'Hello ' . $m[1] . '!';
} else {
    http_response_code(404);
    echo 'Not Found';
}
