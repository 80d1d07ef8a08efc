// The mic button's recorder: hands each block of microphone samples (mono, the
// context's rate) to the page, which downsamples to 16 kHz and makes the WAV.
"use strict";

class DockMic extends AudioWorkletProcessor {
  process(inputs) {
    const channels = inputs[0];
    if (channels && channels.length) this.port.postMessage(channels[0].slice(0));
    return true;
  }
}

registerProcessor("dock-mic", DockMic);
