package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/internal/auditkey"
	"github.com/vigil-dev/vigil/internal/datadir"
)

// addAuditKeyCreate adds `vigil audit key create` under `vigil audit key`.
func addAuditKeyCreate(root *cobra.Command, c *cli) {
	key, _, err := root.Find([]string{"audit", "key"})
	if err != nil || key == nil || key.Name() != "key" {
		return
	}
	sub := newAuditKeyCreateCmd(c)
	sub.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return auditUsageErr(err) })
	key.AddCommand(sub)
}

func newAuditKeyCreateCmd(c *cli) *cobra.Command {
	var (
		out    string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Make a new audit signing key (for a new server or a fleet)",
		Long: `Make a new Ed25519 audit signing key where 'vigil serve' looks for it:
DIR/audit/signer.key (0600) and DIR/audit/verifier.key of the data
directory (--data, $VIGIL_DATA), or, with --out FILE, the private key in
FILE only (0600). An existing key is never overwritten (exit status 2).

Prints the verifier key (public: what auditors pass to 'vigil audit verify
--pubkey') on standard output, and its key id and where the private key
is on standard error.

A fleet signs with one key: make it once, then copy the private key to
DIR/audit/signer.key on every node before its first start. A fleet node
started with another key refuses to start (docs/fleet.md).`,
		Args: auditArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var (
				vkey, file string
				err        error
			)
			if out != "" {
				file = out
				vkey, err = auditkey.CreateFile(out)
			} else {
				file = datadir.New(c.data()).Signer()
				vkey, err = auditkey.Create(c.data())
			}
			if err != nil {
				return auditUsageErr(err)
			}
			if asJSON {
				enc := json.NewEncoder(c.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]string{"key_id": auditkey.KeyID(vkey), "verifier_key": vkey, "signer_file": file})
			}
			fmt.Fprintln(c.stdout, vkey)
			fmt.Fprintf(c.stderr, "audit key %s: private key in %s (keep it 0600; copy it to DIR/audit/signer.key of every fleet node); the verifier key above is public\n",
				auditkey.KeyID(vkey), file)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write the private key to this file instead of DIR/audit/signer.key")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print key_id, verifier_key and signer_file as JSON")
	return cmd
}
