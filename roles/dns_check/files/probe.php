<?php
// Usage: php probe.php URL N -- N GETs with file_get_contents (a new connection each); prints the number answered 200.
[$url, $n] = [$argv[1], (int) $argv[2]];
$ok = 0;
for ($i = 0; $i < $n; $i++) {
    $body = @file_get_contents($url, false, stream_context_create(['http' => ['timeout' => 5]]));
    if ($body !== false && str_contains($http_response_header[0] ?? '', ' 200')) {
        $ok++;
    }
}
echo $ok, "\n";
