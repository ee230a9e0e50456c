package events

// Role is a credential's class: what a connection to a node (NATS) or a
// request to its HTTP API may do. Each role sends on its own ingest subject
// family, and the ingest service stamps the matching Origin on what it
// stores (docs/security.md has the matrix).
type Role string

// Roles. Agents may only send agent events; the runtime also says where a
// conversation runs; approvers send verdicts and read the streams; admins
// and the service itself may do anything.
const (
	RoleAgent    Role = "agent"
	RoleRuntime  Role = "runtime"
	RoleApprover Role = "approver"
	RoleAdmin    Role = "admin"
	RoleService  Role = "service"
)
