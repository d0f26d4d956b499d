package browser

// ForgetFrames drops the last frame of every tab of run runID, open or
// closed: the dashboard calls it for a run whose frames may show a
// person's secrets once nobody has the wheel (a profile's sign-in), so no
// later viewer sees the still. Frames are only ever in memory; a tab still
// watched takes new ones, which is why the dashboard stops watching first.
func (m *Manager) ForgetFrames(runID string) {
	m.live.mu.Lock()
	var tabs []*liveTab
	if r := m.live.runs[runID]; r != nil {
		tabs = append(tabs, r.tabs...)
	}
	m.live.mu.Unlock()
	for _, lt := range tabs {
		lt.mu.Lock()
		lt.last = nil
		lt.mu.Unlock()
	}
}
