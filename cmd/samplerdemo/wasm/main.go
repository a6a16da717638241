//go:build js && wasm

// Command wasm is the WebAssembly side of the teaching page of
// cmd/samplerdemo: it exposes package lab's JSON API to the page's
// JavaScript, which only draws. Built by `samplerdemo -serve/-export` with
// GOOS=js GOARCH=wasm; it does nothing elsewhere.
//
// It sets two functions on the page's global object and then calls
// bsdemoReady():
//
//	bsdemoCall(method, jsonArgument) → {ok: jsonAnswer} or {error: message}
//	bsdemoLoadRun(embBytes, labelBytes, embName, labelName) → the same
package main

import (
	"fmt"
	"syscall/js"

	"github.com/batchsampler-go/batchsampler/cmd/samplerdemo/internal/lab"
)

func main() {
	api := &lab.API{}
	answer := func(f func() ([]byte, error)) (res any) {
		defer func() {
			if r := recover(); r != nil {
				res = map[string]any{"error": fmt.Sprint("internal error: ", r)}
			}
		}()
		out, err := f()
		if err != nil {
			return map[string]any{"error": err.Error()}
		}
		return map[string]any{"ok": string(out)}
	}
	call := js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) != 2 {
			return map[string]any{"error": "bsdemoCall(method, json) takes two arguments"}
		}
		return answer(func() ([]byte, error) { return api.Call(args[0].String(), []byte(args[1].String())) })
	})
	loadRun := js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) != 4 {
			return map[string]any{"error": "bsdemoLoadRun(emb, labels, embName, labelsName) takes four arguments"}
		}
		bytes := func(v js.Value) []byte {
			b := make([]byte, v.Get("length").Int())
			js.CopyBytesToGo(b, v)
			return b
		}
		return answer(func() ([]byte, error) {
			return api.LoadRun(bytes(args[0]), bytes(args[1]), args[2].String(), args[3].String())
		})
	})
	js.Global().Set("bsdemoCall", call)
	js.Global().Set("bsdemoLoadRun", loadRun)
	if ready := js.Global().Get("bsdemoReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {} // serve calls until the page goes away
}
