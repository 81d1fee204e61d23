#!/bin/sh
# Runs the printf program ($1) and checks that every line its kernel prints came out through
# CLR's hostcall listener (the order between waves is not fixed).
set -e
out=$("$1")
echo "$out"
for line in 'block 0 thread 0: 100 0.00 ok' 'block 0 thread 32: 132 16.00 ok' \
            'block 1 thread 0: 100 0.00 ok' 'block 1 thread 32: 132 16.00 ok' 'printf: done'; do
  if ! echo "$out" | grep -qF "hello from $line" && ! echo "$out" | grep -qxF "$line"; then
    echo "missing: $line" >&2
    exit 1
  fi
done
