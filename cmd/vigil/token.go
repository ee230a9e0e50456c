package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/client"
	"github.com/vigil-dev/vigil/client/api"
	"github.com/vigil-dev/vigil/internal/datadir"
	"github.com/vigil-dev/vigil/internal/httpapi"
	"github.com/vigil-dev/vigil/internal/natsutil"
)

type tokenFlags struct {
	url, tokenFile string
}

func (f *tokenFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.url, "url", "", "HTTP API of the node (default http_url in DATA/serve.json, or $VIGIL_URL)")
	cmd.Flags().StringVar(&f.tokenFile, "token-file", "", "file holding an admin token (default $VIGIL_TOKEN, else DATA/creds/admin.token)")
}

// tokenAPI is how `vigil token` reaches a node: its HTTP API, with an
// admin token. Tokens are HTTP credentials, and the API answers a change
// only once the node applied it, so "revoked" means refused from now on.
func (c *cli) tokenAPI(f tokenFlags) (*api.Client, error) {
	u := f.url
	if u == "" {
		u = os.Getenv("VIGIL_URL")
	}
	if u == "" {
		info, err := client.ReadServeInfo(c.data())
		if err != nil {
			return nil, fmt.Errorf("%w (start vigil serve, or name its API with --url)", err)
		}
		if info.HTTPURL == "" {
			return nil, fmt.Errorf("the server in %s serves no HTTP API (vigil serve --http-listen); tokens are HTTP credentials", c.data())
		}
		u = info.HTTPURL
		if c.tlsCA == "" {
			c.tlsCA = info.TLSCA
		}
	}
	hc, err := api.HTTPClient(c.tlsCA)
	if err != nil {
		return nil, err
	}
	tok := ""
	switch {
	case f.tokenFile != "":
		b, err := os.ReadFile(f.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
		tok = strings.TrimSpace(string(b))
	case os.Getenv("VIGIL_TOKEN") != "":
		tok = strings.TrimSpace(os.Getenv("VIGIL_TOKEN"))
	default:
		t, err := natsutil.ReadToken(datadir.New(c.data()).Creds().Dir(), natsutil.RoleAdmin)
		if err != nil {
			return nil, fmt.Errorf("%w; or give an admin token with --token-file", err)
		}
		tok = t
	}
	return api.New(u, tok, hc), nil
}

// tokenDo sends one request of `vigil token`; a refusal for want of
// rights says that managing tokens needs an admin token.
func tokenDo(ctx context.Context, a *api.Client, method, path string, body, out any) error {
	err := a.Do(ctx, method, path, body, out)
	var e *api.Error
	if errors.As(err, &e) && e.Message != "" && (e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden) {
		return fmt.Errorf("%s (managing tokens needs an admin token)", e.Message)
	}
	return err
}

func newTokenCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Create, list and revoke named HTTP API tokens",
		Long: `Named HTTP API tokens, beside the one token per role that vigil serve
writes in DATA/creds/<role>.token (those stay as they are: vigil hook and
scripts read them; rotate one by deleting its file and restarting).

A named token has a role (agent, runtime, approver or admin) and exactly
that role's rights. It is 256 random bits, shown once by create; the log
keeps only its SHA-256 digest and last four characters (a token.created
event), so list shows the id, role, name, creation and the last four
characters, never the token. revoke appends a token.revoked event and
returns once the node refuses the token; the other nodes of a fleet refuse
it as soon as their read models reach the event.

These commands use the node's HTTP API (http_url in DATA/serve.json, or
--url) with an admin token (DATA/creds/admin.token, $VIGIL_TOKEN or
--token-file): only admins manage tokens.`,
	}
	cmd.AddCommand(newTokenCreateCmd(c), newTokenListCmd(c), newTokenRevokeCmd(c))
	return cmd
}

func newTokenCreateCmd(c *cli) *cobra.Command {
	var f tokenFlags
	var role, name string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create --role ROLE [--name NAME]",
		Short: "Create a token of a role and print it (the only time it is shown)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if role == "" {
				return fmt.Errorf("--role is required: agent, runtime, approver or admin")
			}
			a, err := c.tokenAPI(f)
			if err != nil {
				return err
			}
			var out httpapi.TokenCreated
			if err := tokenDo(cmd.Context(), a, http.MethodPost, "/v1/tokens", map[string]string{"role": role, "name": name}, &out); err != nil {
				return fmt.Errorf("create a %s token: %w", role, err)
			}
			if asJSON || !isTerminal(c.stdout) {
				return gateJSON(c.stdout, out)
			}
			fmt.Fprintf(c.stdout, "token %s (role %s", out.ID, out.Role)
			if out.Name != "" {
				fmt.Fprintf(c.stdout, ", %q", out.Name)
			}
			fmt.Fprintf(c.stdout, ") created at log seq %d. It is shown only now:\n\n  %s\n\n", out.Seq, out.Token)
			if !out.Applied {
				fmt.Fprintln(c.stdout, "The node has not applied it yet: it works once its read models reach that seq.")
			}
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&role, "role", "", "the token's role: agent, runtime, approver or admin")
	cmd.Flags().StringVar(&name, "name", "", "what the token is for (up to 64 printable characters)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (with the token)")
	return cmd
}

func newTokenListCmd(c *cli) *cobra.Command {
	var f tokenFlags
	var role string
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "list [--role ROLE] [--all]",
		Short: "List the named tokens (never the tokens themselves)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := c.tokenAPI(f)
			if err != nil {
				return err
			}
			q := url.Values{}
			if all {
				q.Set("all", "true")
			}
			path := "/v1/tokens"
			if len(q) > 0 {
				path += "?" + q.Encode()
			}
			var out httpapi.TokenList
			if err := tokenDo(cmd.Context(), a, http.MethodGet, path, nil, &out); err != nil {
				return fmt.Errorf("list tokens: %w", err)
			}
			rows := out.Tokens[:0]
			for _, t := range out.Tokens {
				if role == "" || t.Role == role {
					rows = append(rows, t)
				}
			}
			if asJSON || !isTerminal(c.stdout) {
				return gateJSON(c.stdout, rows)
			}
			if len(rows) == 0 {
				fmt.Fprintln(c.stdout, "no named tokens (the role files in DATA/creds are not listed)")
				return nil
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tROLE\tNAME\tCREATED\tENDS IN\tBY\tREVOKED")
			for _, t := range rows {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t…%s\t%s\t%s\n", t.ID, t.Role, t.Name, t.Created, t.Hint, t.By, t.Revoked)
			}
			return tw.Flush()
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&role, "role", "", "only tokens of this role")
	cmd.Flags().BoolVar(&all, "all", false, "include revoked tokens")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newTokenRevokeCmd(c *cli) *cobra.Command {
	var f tokenFlags
	var reason string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a named token; the node refuses it once this returns",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := c.tokenAPI(f)
			if err != nil {
				return err
			}
			path := "/v1/tokens/" + url.PathEscape(args[0])
			if reason != "" {
				path += "?reason=" + url.QueryEscape(reason)
			}
			var out struct {
				ID      string `json:"id"`
				Seq     uint64 `json:"seq"`
				Applied bool   `json:"applied"`
			}
			if err := tokenDo(cmd.Context(), a, http.MethodDelete, path, nil, &out); err != nil {
				return fmt.Errorf("revoke %s: %w", args[0], err)
			}
			if asJSON || !isTerminal(c.stdout) {
				return gateJSON(c.stdout, out)
			}
			if out.Applied {
				fmt.Fprintf(c.stdout, "token %s revoked at log seq %d; the node refuses it from now on\n", out.ID, out.Seq)
			} else {
				fmt.Fprintf(c.stdout, "token %s revoked at log seq %d; the node refuses it once its read models reach that seq\n", out.ID, out.Seq)
			}
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&reason, "reason", "", "why (recorded; up to 64 printable characters)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
