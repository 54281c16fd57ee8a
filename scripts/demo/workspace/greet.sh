#!/bin/sh
# Prints a greeting for the name given as $1 (default: world).
echo "Helo, ${1:-world}!"
