package pagetools

import (
	"context"

	"github.com/go-rod/rod"
)

// Settle runs action on page and waits for the page it made the main
// frame load, as the browser_act tool does (see settle): the agent_task
// template acts through it so its next snapshot is of the page an action
// led to, with the same rule as the interactive tools.
func Settle(ctx context.Context, page *rod.Page, action func() error) error {
	return settle(ctx, page, action)
}
