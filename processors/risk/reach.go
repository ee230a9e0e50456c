package risk

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
