package web

import "fmt"

// ClientSnippets returns copyable MCP client configurations for stdio (the
// client launches binary with "mcp") and Streamable HTTP (mcpURL), for
// Claude Desktop, Claude Code, Cursor and VS Code. With withToken the HTTP
// ones carry an Authorization header placeholder. The CLI's doctor prints
// the same snippets.
func ClientSnippets(binary, mcpURL string, withToken bool) []Snippet {
	header, ccHeader := "", ""
	if withToken {
		header = `, "headers": {"Authorization": "Bearer YOUR_TOKEN"}`
		ccHeader = ` --header "Authorization: Bearer YOUR_TOKEN"`
	}
	return []Snippet{
		{ID: "claude-desktop-stdio", Title: "Claude Desktop (stdio)", Where: "claude_desktop_config.json",
			Body: fmt.Sprintf(`{
  "mcpServers": {
    "browsertask": {"command": %q, "args": ["mcp"]}
  }
}`, binary)},
		{ID: "claude-code-stdio", Title: "Claude Code (stdio)", Where: "shell",
			Body: fmt.Sprintf("claude mcp add browsertask -- %s mcp", binary)},
		{ID: "claude-code-http", Title: "Claude Code (HTTP, daemon running)", Where: "shell",
			Body: fmt.Sprintf("claude mcp add --transport http browsertask %s%s", mcpURL, ccHeader)},
		{ID: "cursor-http", Title: "Cursor (HTTP, daemon running)", Where: "~/.cursor/mcp.json",
			Body: fmt.Sprintf(`{
  "mcpServers": {
    "browsertask": {"url": %q%s}
  }
}`, mcpURL, header)},
		{ID: "vscode-stdio", Title: "VS Code (stdio)", Where: ".vscode/mcp.json",
			Body: fmt.Sprintf(`{
  "servers": {
    "browsertask": {"type": "stdio", "command": %q, "args": ["mcp"]}
  }
}`, binary)},
		{ID: "vscode-http", Title: "VS Code (HTTP, daemon running)", Where: ".vscode/mcp.json",
			Body: fmt.Sprintf(`{
  "servers": {
    "browsertask": {"type": "http", "url": %q%s}
  }
}`, mcpURL, header)},
	}
}
