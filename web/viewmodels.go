package web

import "strconv"

// The view models below are what the templ components render; handlers
// build them from engine values so components never see storage shapes.

// Page is the frame around every page.
type Page struct {
	Title   string
	Nav     string // "runs", "new", "sessions", "templates", "profile"
	Version string
}

// RunRow is one line of the runs table.
type RunRow struct {
	ID        string
	ShortID   string
	Template  string
	Status    string
	Progress  ProgressView
	Age       string
	Created   string // RFC 3339, for the title attribute
	Duration  string
	Session   string
	Terminal  bool
	DetailURL string
	// Summary says in one line what the run works on (engine.InputsSummary),
	// clipped; SummaryFull is the whole line, for the title attribute.
	Summary     string
	SummaryFull string
	// Waiting is true while the run waits for a person's answer; the row
	// then stands out and carries a "waiting for you" badge.
	Waiting bool
	// Profile is the browser profile the run used ("" = none), and
	// ProfileURL the runs on it.
	Profile, ProfileURL string
}

// ProgressView is a progress bar.
type ProgressView struct {
	Done, Total, Failed int
	DonePct, FailPct    int
	Message             string
}

// RunsView is the runs list with its filters and paging.
type RunsView struct {
	Page     Page
	Rows     []RunRow
	Status   string
	Template string
	// Profile filters by browser profile ("" = any); Profiles are the
	// choices (the profiles that exist, and Profile itself).
	Profile   string
	Profiles  []string
	Statuses  []string
	Templates []string
	Total     int
	From, To  int
	PrevURL   string
	NextURL   string
	// Live is true while a visible run is not terminal: the table then
	// re-fetches itself every second.
	Live    bool
	SelfURL string
	// Filtered is true when a filter is set (changes the empty state).
	Filtered bool
	// Waiting counts the running runs (all of them, not only this page's)
	// that wait for a person's answer.
	Waiting int
}

// RunView is the run detail page.
type RunView struct {
	Page        Page
	ID          string
	Template    string
	Version     int
	Status      string
	Terminal    bool
	Session     string
	OwnsSession bool
	// BrowserProfile is the persistent profile the run used ("" = none).
	BrowserProfile string
	Mode           string
	Created        string
	Started        string
	Finished       string
	Queued         string
	Elapsed        string
	// RanFor is how long a finished run ran ("" while it runs).
	RanFor    string
	Expires   string
	Progress  ProgressView
	Inputs    string
	Items     []ItemRow
	ItemsMore int
	// ItemArtifacts is true when an item made an artifact (the items
	// table then has an Artifact column).
	ItemArtifacts bool
	Error         *ErrorView
	Result        string
	Artifacts     []ArtifactView
	Events        []EventRow
	EventsNote    string
	CancelURL     string
	// ConfirmCancelURL is the confirmation page a Cancel without
	// JavaScript leads to (with JavaScript the button asks, hx-confirm).
	ConfirmCancelURL string
	SelfURL          string
	CancelNote       string
	// InFlight are the pages the run's open tabs are on right now (a
	// running run executing in this process).
	InFlight []InFlightView
	// Questions are the questions the run waits on (empty unless it is
	// running and waiting for a person).
	Questions []QuestionView
	// AnswerURL is where the answer forms post.
	AnswerURL string
	// Live is the run's live view (nil: none to show, or a refresh of the
	// live region, which keeps the one on the page: hx-preserve).
	Live *LiveView
	// AnswerNote confirms an answer was sent; AnswerError says why one was
	// refused. Neither ever holds the answer itself.
	AnswerNote  string
	AnswerError *ErrorView
}

// LiveView is the live view of a run's browser on its run page.
type LiveView struct {
	// StreamURL is the frame stream (Server-Sent Events); "" when the
	// view is not streamed from here (a finished run's stills, or a run
	// another process executes).
	StreamURL string
	// TakeOverURL is where "Take over" posts.
	TakeOverURL string
	// Elsewhere says where the live view is served when another process
	// runs the run; ElsewhereURL links there ("" when it serves none).
	Elsewhere    string
	ElsewhereURL string
	// Note is shown when there is nothing to watch (yet).
	Note string
	Tabs []LiveTabView
	// Control is set while a takeover is open: the tabs take the person's
	// input.
	Control bool
	// CanTakeOver shows "Take over" (the run runs here, no takeover open).
	CanTakeOver bool
}

// LiveTabView is one tab in a live view.
type LiveTabView struct {
	ID    string
	URL   string
	Title string
	// Label is the tools' name for a session's tab ("t1"; "" for a run's).
	Label  string
	Closed bool
	// Frame is the last frame as a data: URL ("" before the first one).
	Frame string
	// Event is the name of the tab's frame events in the stream.
	Event string
	// InputURL is where the person's input for the tab is posted.
	InputURL string
	// GoURL is where the address bar posts (shown during a takeover).
	GoURL string
	// Hidden is set when the tab's frames are not shown (framesPrivate).
	Hidden bool
}

// QuestionView is one question a waiting run asks the person.
type QuestionView struct {
	RequestID string
	// Kind is engine.QuestionText, QuestionSecret, QuestionConfirm or QuestionMCP.
	Kind string
	// KindLabel says in words what is asked.
	KindLabel string
	Message   string
	Asked     string // "12.0s ago"
	Expires   string // "in 9m 48s"
	ExpiresAt string // RFC 3339, for the title attribute
	// FormID is the answer form's element id, stable for the question so
	// the page's live refresh keeps a half-typed answer (hx-preserve).
	FormID string
	// Answerable is false for raw MCP requests, which only the MCP client
	// that started the task can answer.
	Answerable bool
	// URL is a takeover's live view (on the process that runs the run).
	URL string
}

// InFlightView is one open tab of a running run.
type InFlightView struct {
	URL   string
	Title string
}

// ItemRow is one item checkpoint.
type ItemRow struct {
	Index      int
	Key        string
	URL        string
	Status     string
	HTTPStatus string
	Error      string
	// ArtifactID is the artifact the item made ("" for none); ArtifactURL
	// and ArtifactName link it from the row once the artifact is known.
	ArtifactID   string
	ArtifactURL  string
	ArtifactName string
}

// Anchor is the row's element id, which its artifact's card links to.
func (it ItemRow) Anchor() string { return "item-" + strconv.Itoa(it.Index) }

// ErrorView is a domain error with its recovery advice.
type ErrorView struct {
	Code     string
	Message  string
	Recovery string
	Details  string
}

// ArtifactView is one artifact of a run.
type ArtifactView struct {
	ID       string
	Name     string
	MimeType string
	Size     string
	URL      string
	Download string
	Image    bool
	Expired  bool
	// Item is what the artifact shows: its item's URL (or key) and the
	// row's anchor ("" for an artifact no item made, such as pages.json).
	Item       string
	ItemAnchor string
}

// EventRow is one entry of the event timeline.
type EventRow struct {
	Seq  int64
	Time string
	Ago  string
	Type string
	Text string
}

// NewRunView is the new-run form.
type NewRunView struct {
	Page      Page
	Templates []TemplateOption
	Selected  string
	Inputs    string
	Mode      string
	Error     *ErrorView
	Schema    string
}

// TemplateOption is an entry of the template picker.
type TemplateOption struct {
	ID       string
	Title    string
	Selected bool
}

// TemplatesView lists the templates.
type TemplatesView struct {
	Page      Page
	Templates []TemplateView
}

// TemplateView is one template's description.
type TemplateView struct {
	ID          string
	Title       string
	Version     int
	Versions    string
	Description string
	TrustLevel  string
	Resumable   bool
	Steps       string
	Schema      string
	Examples    []string
	RunURL      string
}

// SessionsView lists the browser sessions in use.
type SessionsView struct {
	Page     Page
	Sessions []SessionRow
}

// SessionRow is one session and the runs using it.
type SessionRow struct {
	ID     string
	Runs   int
	Status string
	Latest string
	RunURL string
	// URL is the session's page (its interactive calls); "" for a run's
	// own throwaway session.
	URL string
}

// ProfileView is the runtime profile page.
type ProfileView struct {
	Page     Page
	Fields   []KV
	Browser  string
	DBPath   string
	MCPURL   string
	Snippets []Snippet
}

// KV is a labelled value.
type KV struct {
	Key, Value string
}

// Snippet is a copyable MCP client configuration.
type Snippet struct {
	ID    string
	Title string
	Where string
	Body  string
}
