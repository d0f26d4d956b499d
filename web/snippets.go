package web

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ClientSnippets returns copyable MCP client configurations for stdio (the
// client launches binary with args, e.g. ["mcp", "--db", "/abs/bt.db"]) and
// Streamable HTTP (mcpURL), for Claude Desktop, Claude Code, Cursor and VS
// Code, quoted as JSON and for a POSIX shell. With withToken the HTTP ones
// carry an Authorization header placeholder. The CLI's doctor prints the
// same snippets.
func ClientSnippets(binary string, args []string, mcpURL string, withToken bool) []Snippet {
	header, ccHeader := "", ""
	if withToken {
		header = `, "headers": {"Authorization": "Bearer YOUR_TOKEN"}`
		ccHeader = ` --header "Authorization: Bearer YOUR_TOKEN"`
	}
	command, argList := jsonText(binary), jsonList(args)
	words := []string{"claude", "mcp", "add", "browsertask", "--", shellWord(binary)}
	for _, a := range args {
		words = append(words, shellWord(a))
	}
	return []Snippet{
		{ID: "claude-desktop-stdio", Title: "Claude Desktop (stdio)", Where: "claude_desktop_config.json",
			Body: fmt.Sprintf(`{
  "mcpServers": {
    "browsertask": {"command": %s, "args": %s}
  }
}`, command, argList)},
		{ID: "claude-code-stdio", Title: "Claude Code (stdio)", Where: "shell", Body: strings.Join(words, " ")},
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
    "browsertask": {"type": "stdio", "command": %s, "args": %s}
  }
}`, command, argList)},
		{ID: "vscode-http", Title: "VS Code (HTTP, daemon running)", Where: ".vscode/mcp.json",
			Body: fmt.Sprintf(`{
  "servers": {
    "browsertask": {"type": "http", "url": %q%s}
  }
}`, mcpURL, header)},
	}
}

// jsonText is s as a JSON string.
func jsonText(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		return `""`
	}
	return string(b)
}

// jsonList is list as a JSON array of strings.
func jsonList(list []string) string {
	parts := make([]string, len(list))
	for i, s := range list {
		parts[i] = jsonText(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// shellWord is s quoted for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
