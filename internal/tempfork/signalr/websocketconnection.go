package signalr

import (
	"bytes"
	"context"
	"fmt"
	"github.com/coder/websocket"
	"net/http"
	"net/url"
)

func NewWebSocketConnection(ctx context.Context, reqURL *url.URL, connectionID string, headers http.Header) (Connection, error) {
	ws, _, err := websocket.Dial(ctx, reqURL.String(), &websocket.DialOptions{HTTPHeader: headers})
	if err != nil {
		return nil, err
	}

	return newWebSocketConnection(ctx, connectionID, ws), nil
}

type webSocketConnection struct {
	ConnectionBase
	conn         *websocket.Conn
	transferMode TransferMode
}

func newWebSocketConnection(ctx context.Context, connectionID string, conn *websocket.Conn) *webSocketConnection {
	w := &webSocketConnection{
		conn:           conn,
		ConnectionBase: *NewConnectionBase(ctx, connectionID),
	}
	return w
}

func (w *webSocketConnection) Write(p []byte) (n int, err error) {
	return w.writeContext(w.Context(), p)
}

// writeContext writes p as one message and returns when the write has ended
// or ctx is done, whichever is first. tempfork: upstream ran every write in
// a goroutine of its own (ReadWriteWithContext) to return when the context
// is done; websocket.Conn.Write already does (it closes the connection on
// ctx's end, which unblocks the write), so the goroutine only cost a stack
// per message.
func (w *webSocketConnection) writeContext(ctx context.Context, p []byte) (n int, err error) {
	messageType := websocket.MessageText
	if w.transferMode == BinaryTransferMode {
		messageType = websocket.MessageBinary
	}
	if err = ctx.Err(); err == nil {
		err = w.conn.Write(ctx, messageType, p)
	}
	if err != nil {
		err = fmt.Errorf("%T: %w", w, err)
		_ = w.conn.Close(1000, err.Error())
		return 0, err
	}
	return len(p), nil
}

func (w *webSocketConnection) Read(p []byte) (n int, err error) {
	n, err = ReadWriteWithContext(w.Context(),
		func() (int, error) {
			_, data, err := w.conn.Read(w.Context())
			if err != nil {
				return 0, err
			}
			return bytes.NewReader(data).Read(p)
		},
		func() {})
	if err != nil {
		err = fmt.Errorf("%T: %w", w, err)
		_ = w.conn.Close(1000, err.Error())
	}
	return n, err
}

func (w *webSocketConnection) TransferMode() TransferMode {
	return w.transferMode
}

func (w *webSocketConnection) SetTransferMode(transferMode TransferMode) {
	w.transferMode = transferMode
}
