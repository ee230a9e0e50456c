package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/nats-io/nkeys"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

// credsSeedNotice precedes the seed block of a .creds file as nsc and
// the NATS tools write it (nkeys.FormatUserConfig). Vigil's files hold no
// JWT block: see newCredsCreateCmd.
const credsSeedNotice = `************************* IMPORTANT *************************
NKEY Seed printed below can be used to sign and prove identity.
NKEYs are sensitive and should be treated as secrets.

`

func newCredsCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "creds",
		Short: "Make the role credentials of a server or fleet, as NATS .creds files",
		Long: `Vigil authenticates every NATS connection with an nkey per role (agent,
runtime, approver, admin, service), kept as seeds in the credentials
directory (DIR/creds, or the --creds-dir a fleet shares; mode 0600),
beside the HTTP API's bearer tokens (<role>.token).`,
	}
	cmd.AddCommand(newCredsCreateCmd(c))
	return cmd
}

func newCredsCreateCmd(c *cli) *cobra.Command {
	var (
		role, credsDir, out string
		asJSON              bool
		tlsNode             string
		tlsHosts            []string
	)
	cmd := &cobra.Command{
		Use:   "create --role ROLE",
		Short: "Write a role's credentials as a NATS .creds file",
		Long: `Write the credentials of one role (agent, runtime, approver, admin or
service) as a NATS .creds file, mode 0600, to hand to whoever acts in that
role: --out FILE (default <creds dir>/<role>.creds; - for standard output).
An existing file is never overwritten.

The credentials directory is --creds-dir, or DIR/creds of the data
directory. When it holds no seeds yet, they are made for every role, as
'vigil serve' would at its first start: make a fleet's credentials this
way once, then copy the directory to every node (docs/fleet.md).

The file is the seed block of the standard .creds layout, with no JWT:
Vigil's embedded server authenticates the role's nkey itself (no NATS
operator or account JWTs). Vigil's --creds reads it, as do NATS clients
that take an nkey seed file (nats.go NkeyOptionFromSeed, the nats CLI's
--nkey); clients that require a user JWT (nats.go UserCredentials, the
nats CLI's --creds) cannot use it. Agents and the runtime must also
declare an inbox token (natsutil.InboxOptions; Vigil's own clients do).

It also makes the fleet's TLS CA in the directory if there is none
(ECDSA P-256): fleet-ca.pem, the certificate every client verifies a
node with, and fleet-ca.key (0600), its key and certificate, with which
a --cluster node issues its own certificate at start. Copying the
directory to every node therefore gives the fleet TLS on every link.
To keep the CA key off the nodes, issue each node's certificate here
(--tls-node NAME --tls-host ADDR,...: <creds dir>/tls/NAME.pem and .key),
copy fleet-ca.pem, that pair and the role files (not fleet-ca.key) to
the node, and start it with --tls-cert, --tls-key and --tls-ca.

Prints the file's path and the role's public key.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r := natsutil.Role(role)
			if role == "" && tlsNode == "" {
				return errors.New("name a --role (agent, runtime, approver, admin or service), or a --tls-node to issue a certificate for")
			}
			if role != "" && !slices.Contains(natsutil.Roles, r) {
				return fmt.Errorf("--role %q: use one of agent, runtime, approver, admin, service", role)
			}
			dir := credsDir
			if dir == "" {
				dir = datadir.New(c.data()).Creds().Dir()
			}
			pubs, err := natsutil.EnsureCreds(dir)
			if err != nil {
				return err
			}
			if _, err := natsutil.EnsureFleetCA(dir); err != nil {
				return err
			}
			if tlsNode != "" {
				if err := issueNodeCert(c, dir, tlsNode, tlsHosts, asJSON && role == ""); err != nil {
					return err
				}
				if role == "" {
					return nil
				}
			}
			// The HTTP tokens live beside the seeds: made now, a fleet
			// that copies the directory shares them too.
			if _, err := natsutil.EnsureTokens(dir); err != nil {
				return err
			}
			seed, err := os.ReadFile(datadir.CredsAt(dir).Seed(r))
			if err != nil {
				return err
			}
			body, err := credsFileContent(bytes.TrimSpace(seed))
			if err != nil {
				return err
			}
			if out == "-" {
				_, err := c.stdout.Write(body)
				return err
			}
			if out == "" {
				out = datadir.CredsAt(dir).NATSCreds(r)
			}
			if err := writeNewFile(out, body, 0o600); err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(c.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]string{"role": role, "file": out, "public_key": pubs[r], "creds_dir": dir})
			}
			fmt.Fprintf(c.stdout, "wrote %s (role %s, public key %s; seeds in %s)\n", out, role, pubs[r], dir)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&role, "role", "", "the role: agent, runtime, approver, admin or service")
	fl.StringVar(&credsDir, "creds-dir", "", "credentials directory (default DIR/creds; a fleet shares one)")
	fl.StringVar(&out, "out", "", "write here (default <creds dir>/<role>.creds; - for standard output)")
	fl.BoolVar(&asJSON, "json", false, "print role, file, public_key and creds_dir as JSON")
	fl.StringVar(&tlsNode, "tls-node", "", "also issue the TLS certificate of this node (its --node name) from the fleet CA, into <creds dir>/tls/NAME.pem and NAME.key")
	fl.StringSliceVar(&tlsHosts, "tls-host", nil, "with --tls-node: the addresses and names the node is reached at (its --nats-listen, --cluster-listen and route hosts)")
	return cmd
}

// issueNodeCert writes node's certificate and key under dir/tls.
func issueNodeCert(c *cli, dir, node string, hosts []string, asJSON bool) error {
	if len(hosts) == 0 {
		return fmt.Errorf("--tls-node %s needs --tls-host: the addresses and names the node is reached at", node)
	}
	ca, err := natsutil.LoadFleetCA(dir)
	if err != nil {
		return err
	}
	certPath := datadir.CredsAt(dir).NodeCert(node)
	keyPath := datadir.CredsAt(dir).NodeKey(node)
	for _, p := range []string{certPath, keyPath} {
		if _, err := os.Stat(p); err == nil {
			return fmt.Errorf("%s exists already: not overwritten (remove it to issue a new one)", p)
		}
	}
	if err := ca.Issue(node, natsutil.NodeHosts(nil, hosts), natsutil.NodeValidity, certPath, keyPath); err != nil {
		return err
	}
	caPath := datadir.CredsAt(dir).FleetCA()
	if asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]string{"node": node, "cert": certPath, "key": keyPath, "ca": caPath})
	}
	fmt.Fprintf(c.stdout, "wrote %s and %s (node %s, valid for %s; CA %s)\nstart it with: vigil serve --node %s --tls-cert %s --tls-key %s --tls-ca %s ...\n",
		certPath, keyPath, node, strings.Join(hosts, ", "), caPath, node, certPath, keyPath, caPath)
	return nil
}

// credsFileContent is a .creds file holding seed (an nkey user seed) and
// no JWT.
func credsFileContent(seed []byte) ([]byte, error) {
	kp, err := nkeys.FromSeed(seed)
	if err != nil {
		return nil, fmt.Errorf("not an nkey seed: %w", err)
	}
	if pub, err := kp.PublicKey(); err != nil || !nkeys.IsValidPublicUserKey(pub) {
		return nil, errors.New("not an nkey user seed")
	}
	var b bytes.Buffer
	b.WriteString(credsSeedNotice)
	b.WriteString("-----BEGIN USER NKEY SEED-----\n")
	b.Write(seed)
	b.WriteString("\n------END USER NKEY SEED------\n\n")
	b.WriteString("*************************************************************\n")
	return b.Bytes(), nil
}

// writeNewFile writes data to path with mode, failing if path exists.
func writeNewFile(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists already: not overwritten (remove it, or pass --out)", path)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}
