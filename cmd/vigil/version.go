package main

import (
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/internal/node"
)

func newVersionCmd(c *cli) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print Vigil's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				return json.NewEncoder(c.stdout).Encode(map[string]string{"version": node.Version, "go": runtime.Version()})
			}
			_, err := fmt.Fprintf(c.stdout, "vigil %s (%s)\n", node.Version, runtime.Version())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
