package llm

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"

	"github.com/sashabaranov/go-openai"
)

// IsRetryable reports whether err is worth another attempt later: rate
// limiting (429), server errors (5xx), request timeouts (408, a per-call
// deadline, a network timeout) and connections refused, reset or cut short.
// Everything else (400, 401, 404, a cancelled context, a malformed reply)
// fails the same way every time, so retrying it only wastes budget. The
// pipeline uses it too, to decide whether a job waits or dead-letters.
func IsRetryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if status := httpStatus(err); status != 0 {
		return status == http.StatusTooManyRequests ||
			status == http.StatusRequestTimeout ||
			status >= http.StatusInternalServerError
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}

// httpStatus digs the provider's HTTP status out of go-openai's errors: an
// OpenAI-style error body gives *openai.APIError, anything else (a proxy's
// HTML page, plain text) gives *openai.RequestError. Zero means no HTTP
// answer was received.
func httpStatus(err error) int {
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) && reqErr.HTTPStatusCode != 0 {
		return reqErr.HTTPStatusCode
	}
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) && apiErr.HTTPStatusCode != 0 {
		return apiErr.HTTPStatusCode
	}
	return 0
}
