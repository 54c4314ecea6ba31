/* hw_netconf_check.h — validators for address-valued configuration keys,
 * in the shape of hw_props' check functions (lib/props/hw_props.h
 * hw_prop_check_fn): 0 if the value is valid, else -EINVAL with a short
 * reason in why. Shared by hiwaterd's schema and the CLI's client
 * properties so both accept the same text. */
#ifndef HW_NETCONF_CHECK_H
#define HW_NETCONF_CHECK_H
#include <stddef.h>

/* "udp:HOST:PORT" or "HOST:PORT", HOST an IPv4 address or localhost,
 * PORT 0..65535 (0: ephemeral). */
int hw_netconf_check_udp_ep(const char *v, char *why, size_t whylen);
#define HW_NETCONF_UDP_EP_VALID "udp:HOST:PORT (HOST an IPv4 address)"
/* Normalise an accepted value into "udp:HOST:PORT" ("" stays "").
 * 0, or -EINVAL when hw_netconf_check_udp_ep would refuse it. */
int hw_netconf_norm_udp_ep(const char *v, char *out, size_t cap);

/* An IPv4 address in dotted-quad form. */
int hw_netconf_check_ipv4(const char *v, char *why, size_t whylen);
#define HW_NETCONF_IPV4_VALID "an IPv4 address"

/* A DPDK port: a vdev name or an ethdev port id (no ',' or blank). */
int hw_netconf_check_dpdk_port(const char *v, char *why, size_t whylen);
#define HW_NETCONF_DPDK_PORT_VALID "a vdev name or a port id"

#endif
