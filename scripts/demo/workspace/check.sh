#!/bin/sh
# The project's test: the greeting must be spelled right.
out=$(sh greet.sh Ada)
if [ "$out" = "Hello, Ada!" ]; then
  echo "check passed: $out"
else
  echo "check failed: expected 'Hello, Ada!', got '$out'"
  exit 1
fi
