package shell

import "strings"

// reachServices keep a machine reachable by the people who run it: the ssh
// daemon, the network stack, remote desktop, VPN and tunnels. Stopping them
// on a remote host locks everyone out until someone reaches the console.
var reachServices = []string{"sshd", "ssh", "openssh", "openssh-server", "networkmanager", "network", "networking", "systemd-networkd",
	"systemd-resolved", "wpa_supplicant", "dhcpcd", "dhclient", "netplan", "ifup", "tailscaled", "tailscale", "zerotier-one", "wg-quick",
	"openvpn", "xrdp", "vncserver", "termservice", "winrm", "com.openssh.sshd", "cloudflared", "amazon-ssm-agent", "google-guest-agent",
	"walinuxagent", "waagent", "cloud-init"}

// reachService reports whether a unit or service name is one of them.
func reachService(s string) bool {
	l := strings.ToLower(s)
	l = strings.TrimSuffix(strings.TrimSuffix(l, ".service"), ".socket")
	if i := strings.LastIndexByte(l, '/'); i >= 0 {
		l = l[i+1:]
	}
	if at := strings.IndexByte(l, '@'); at > 0 {
		l = l[:at]
	}
	for _, n := range reachServices {
		if l == n {
			return true
		}
	}
	return false
}

// reachRules judges commands that can cut a machine off the network:
// interfaces taken down, routes and addresses flushed, VPNs and tunnels
// stopped. On a remote host the person running it is locked out until
// someone reaches the console, so they are HIGH; loopback and container
// bridges are not what keeps a host reachable.
func (w *walker) reachRules(c *command) {
	a := c.args
	down := func(iface, what string) {
		if iface == "" || localIface(iface) {
			w.hit(c, ruleNetworkChange, med, c.name+" "+what)
			return
		}
		w.hit(c, ruleRemoteAccessLoss, high, c.name+" "+what+": the machine may become unreachable")
	}
	switch c.name {
	case "ip":
		ops := operands(a)
		if len(ops) == 0 {
			return
		}
		obj, verb := ops[0], ""
		if len(ops) > 1 {
			verb = ops[1]
		}
		switch {
		case prefixOf(obj, "link") && verb == "set" && hasArg(ops, "down"):
			i := ifaceAfter(ops, "dev", 2)
			down(i, "takes the interface "+i+" down")
		case prefixOf(obj, "link") && prefixOf(verb, "delete"):
			i := ifaceAfter(ops, "dev", 2)
			down(i, "deletes the interface "+i)
		case (prefixOf(obj, "address") || prefixOf(obj, "route")) && prefixOf(verb, "flush"):
			i := ifaceAfter(ops, "dev", 2)
			if i == "" || i == "table" || i == "all" {
				i = "all"
			} else if i == "cache" {
				w.hit(c, ruleNetworkChange, med, "ip route flush cache")
				return
			}
			down(i, "ip "+obj+" flush removes the addresses or routes of "+i)
		case prefixOf(obj, "route") && (prefixOf(verb, "delete") || verb == "del") && hasArg(ops, "default", "0.0.0.0/0"):
			down("default", "deletes the default route")
		case prefixOf(obj, "address") || prefixOf(obj, "route") || prefixOf(obj, "link"):
			if verb != "" && !prefixOf(verb, "show") && !prefixOf(verb, "list") && verb != "get" {
				w.hit(c, ruleNetworkChange, med, "ip "+obj+" "+verb+" changes the network configuration")
			}
		}
	case "ifconfig":
		ops := operands(a)
		if len(ops) >= 2 && hasArg(ops[1:], "down") {
			down(ops[0], "takes the interface "+ops[0]+" down")
		} else if len(ops) >= 2 {
			w.hit(c, ruleNetworkChange, med, "ifconfig changes the interface "+ops[0])
		}
	case "ifdown":
		ops := operands(a)
		iface := "all"
		if len(ops) > 0 {
			iface = ops[0]
		}
		down(iface, "takes the interface "+iface+" down")
	case "route":
		if hasArg(a, "del", "delete") && hasArg(a, "default", "0.0.0.0") {
			down("default", "deletes the default route")
		} else if hasArg(a, "add", "del", "delete", "flush", "change") {
			w.hit(c, ruleNetworkChange, med, "route changes the routing table")
		}
	case "nmcli":
		ops := operands(a)
		switch {
		case len(ops) >= 2 && prefixOf(ops[0], "networking") && ops[1] == "off",
			len(ops) >= 3 && prefixOf(ops[0], "radio") && ops[len(ops)-1] == "off":
			down("all", strings.Join(ops, " ")+" turns networking off")
		case len(ops) >= 3 && (prefixOf(ops[0], "connection") || prefixOf(ops[0], "device")) && (ops[1] == "down" || prefixOf(ops[1], "disconnect") || prefixOf(ops[1], "delete")):
			down(ops[2], ops[0]+" "+ops[1]+" "+ops[2])
		case len(ops) >= 2 && (ops[1] == "modify" || ops[1] == "up" || ops[1] == "add"):
			w.hit(c, ruleNetworkChange, med, "nmcli changes the network configuration")
		}
	case "tailscale", "zerotier-cli", "wg-quick", "wg":
		if hasArg(a, "down", "logout", "leave") {
			down("vpn", "disconnects the VPN the machine may be reached through")
		}
	case "netplan":
		if hasArg(a, "apply") {
			w.hit(c, ruleNetworkChange, med, "netplan apply reconfigures the network (a mistake locks the host out)")
		}
	}
}

func prefixOf(s, full string) bool { return s != "" && strings.HasPrefix(full, s) }

// ifaceAfter returns the value after key in ops (or ops[at] when there is
// no key), the interface an ip command acts on.
func ifaceAfter(ops []string, key string, at int) string {
	for i, o := range ops {
		if o == key && i+1 < len(ops) {
			return ops[i+1]
		}
	}
	if at < len(ops) {
		return ops[at]
	}
	return ""
}

// localIface reports whether an interface only links local things
// (loopback, container bridges and veth pairs, tap/tun of VMs).
func localIface(n string) bool {
	for _, p := range []string{"lo", "docker", "veth", "br-", "cni", "flannel", "virbr", "vnet", "tap", "podman", "lxc", "lxd", "kube", "cali", "weave"} {
		if n == p || strings.HasPrefix(n, p) && p != "lo" {
			return true
		}
	}
	return false
}

// firewallLockout reports whether an iptables/ip6tables rule drops what
// reaches the machine: a DROP policy on INPUT, or a DROP/REJECT rule on
// INPUT that matches everything or the ssh port.
func firewallLockout(a []string) bool {
	if (flagSet(a, 'P', "--policy") && hasArg(a, "INPUT")) && hasArg(a, "DROP", "REJECT") {
		return true
	}
	if !(flagSet(a, 'A', "--append") || flagSet(a, 'I', "--insert")) || !hasArg(a, "INPUT") {
		return false
	}
	target, _ := optValue(a, "-j", "--jump")
	if target != "DROP" && target != "REJECT" {
		return false
	}
	if p, ok := optValue(a, "", "--dport", "--destination-port"); ok {
		return p == "22" || p == "ssh" || strings.HasPrefix(p, "22:") || strings.HasSuffix(p, ":22")
	}
	for _, x := range a {
		switch x {
		case "-s", "--source", "-p", "--protocol", "-i", "--in-interface", "-m", "--match", "--sport", "--dports":
			return false
		}
	}
	return true
}
