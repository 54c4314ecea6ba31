#!/usr/bin/env bash
# it_hosts_udp.sh — it_hosts.sh over kernel UDP: brokers on separate
# "hosts" (network namespaces) with no NAT, the CLI using only
# --bootstrap-server and --command-config.
exec "$(dirname "$0")/it_hosts.sh" udp
