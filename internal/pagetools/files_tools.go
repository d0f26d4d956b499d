package pagetools

// fileTools are the tools that move files in and out of a session's page
// and capture its traffic: browser_upload, browser_download and
// browser_network. What they bring out is an artifact of the session
// (engine.PutSessionArtifact), answered with a resource_link.
func (t *Tools) fileTools() []tool {
	str := func(d string) map[string]any { return map[string]any{"type": "string", "description": d} }
	integer := func(d string) map[string]any { return map[string]any{"type": "integer", "description": d} }
	artOut := map[string]any{
		"artifactId": str("The artifact holding the file (get_artifact, or resources/read of browsertask://artifacts/{artifactId})."),
		"name":       str("The file's name."), "mimeType": str("Its type."), "size": integer("Its bytes."),
	}
	return []tool{
		{name: "browser_upload", description: "Sets the file of a file input (by its reference from the latest snapshot) to an artifact (artifactId) " +
			"or to a file under a directory the daemon allows (path, absolute; the daemon's --allow-upload-dir DIR). Answers the file's name, size and SHA-256 " +
			"and what changed on the page; submit the form with browser_act. Errors: INVALID_PARAMETER (not a file input, both or neither of artifactId and path, " +
			"a path outside the allowed directories or without the flag), ARTIFACT_NOT_FOUND.",
			props: map[string]any{
				"ref":        str("The file input's reference, such as e12."),
				"artifactId": str("Upload this artifact (its name is the file's name)."),
				"path":       str("Upload this file: an absolute path under a directory of the daemon's --allow-upload-dir."),
			},
			output: merge(map[string]any{"done": str("The upload done."), "sha256": str("SHA-256 of the bytes set, hex.")}, merge(artOut, map[string]any{})),
			run:    t.upload},
		{name: "browser_download", description: "Answers the session's oldest download not yet answered (a link or button that downloads a file, clicked with browser_act) " +
			"as an artifact of the session with a resource link, waiting up to timeoutMs (default 10000) for one to finish. Files over 64 MiB are canceled. " +
			"Errors: STEP_EXECUTION_FAILED (no download ended in time, canceled, too large).",
			props:  map[string]any{"timeoutMs": map[string]any{"type": "integer", "minimum": 1, "maximum": 60000, "description": "How long to wait (default 10000)."}},
			output: merge(map[string]any{"sha256": str("SHA-256 of the file, hex."), "url": str("Where it was downloaded from.")}, artOut),
			run:    t.download},
		{name: "browser_network", description: "Captures the requests of the session's page: action start (bodies: also request and response bodies, each up to 64 KiB), " +
			"then action stop, which answers a HAR 1.2 artifact (method, URL, status, headers, timings) with a resource link. Secrets are masked with ***: " +
			"Authorization, Cookie and Set-Cookie values, query and form values named like password/token/code, and every password typed on the page with browser_act. " +
			"Errors: INVALID_PARAMETER (start while capturing, stop without a capture).",
			props: map[string]any{
				"action": map[string]any{"type": "string", "enum": []string{"start", "stop"}},
				"bodies": map[string]any{"type": "boolean", "description": "With start: keep request and response bodies (default false)."},
			},
			output: merge(map[string]any{"capturing": map[string]any{"type": "boolean"}, "entries": integer("Requests in the HAR (stop).")}, artOut),
			run:    t.network},
	}
}
