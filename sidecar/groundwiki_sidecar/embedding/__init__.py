"""Text to vectors: the ONNX model, an OpenAI-compatible server, and the choice between them. Imports base/ and below."""
