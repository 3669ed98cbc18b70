package reliability

// appServer is filled in by appmode.go.
type appServer struct{}
