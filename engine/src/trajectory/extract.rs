//! Reading the tool calls a model asked for out of its responses, in the three API shapes, and
//! out of streamed responses as a recording keeps them (the list of server-sent events, each
//! `{"event"?, "data": JSON}` or `{"text": ...}`).

use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One step of a trajectory: a tool the model asked for (or the code noted), with its arguments
/// and the model response it came in.
///
/// Serialized as `{"tool": "recommend", "args": {...}, "response": 1}`, the shape `code_judge`
/// scripts and reports see (`response` left out for a step the code noted).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ToolCall {
    /// The tool's name.
    pub tool: String,
    /// Its arguments: the parsed JSON, or the string as sent when it is not JSON.
    pub args: Value,
    /// The index of the model response that asked for it, among the case's model calls in the
    /// order they were answered (from 0); `None` for a step the code noted. The calls of one
    /// response were asked for together: their order means nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<usize>,
}

impl ToolCall {
    /// A call of `tool` with `args`, of no model response (a step of its own).
    pub fn new(tool: impl Into<String>, args: Value) -> ToolCall {
        ToolCall {
            tool: tool.into(),
            args,
            response: None,
        }
    }

    /// The call as one of model response `index`'s.
    ///
    /// ```
    /// use proposal_eval_engine::trajectory::{tool_calls, ToolCall};
    /// use serde_json::json;
    /// let response = json!({"content": [
    ///     {"type": "tool_use", "name": "lookup", "input": {"sku": "A"}},
    ///     {"type": "tool_use", "name": "lookup", "input": {"sku": "B"}}
    /// ]});
    /// let calls: Vec<ToolCall> = tool_calls(&response).into_iter().map(|c| c.in_response(3)).collect();
    /// assert_eq!(calls[1].response, Some(3));
    /// ```
    pub fn in_response(mut self, index: usize) -> ToolCall {
        self.response = Some(index);
        self
    }
}

/// The calls' groups, in order: the runs of calls of one model response (asked for together,
/// so in no order among themselves); a call of no response is a group of its own.
pub(crate) fn groups(calls: &[ToolCall]) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    for (j, call) in calls.iter().enumerate() {
        match out.last_mut() {
            Some(last)
                if call.response.is_some() && calls[last.start].response == call.response =>
            {
                last.end = j + 1
            }
            _ => out.push(j..j + 1),
        }
    }
    out
}

/// The tool calls in one model response, in the response's order; none for a response that
/// asks for no tool (or is of no shape known here).
///
/// Read: OpenAI Chat Completions (`choices[0].message.tool_calls[]`), OpenAI Responses
/// (`output[]` items of `type = "function_call"`), Anthropic Messages (`content[]` blocks of
/// `type = "tool_use"`), and a streamed response of any of the three as a list of events.
/// Arguments sent as a JSON string are parsed, and kept as the string when they do not parse.
///
/// ```
/// use proposal_eval_engine::trajectory::{tool_calls, ToolCall};
/// use serde_json::json;
/// let response = json!({"choices": [{"message": {"tool_calls": [
///     {"id": "c1", "type": "function",
///      "function": {"name": "inventory_lookup", "arguments": "{\"sku\":\"SKU-123\"}"}}
/// ]}}]});
/// assert_eq!(
///     tool_calls(&response),
///     vec![ToolCall::new("inventory_lookup", json!({"sku": "SKU-123"}))]
/// );
/// ```
pub fn tool_calls(response: &Value) -> Vec<ToolCall> {
    match response {
        Value::Object(map) => whole(map),
        Value::Array(events) => streamed(events),
        _ => Vec::new(),
    }
}

/// Arguments as sent: a JSON string is parsed, other values are kept.
fn arguments(raw: Option<&Value>) -> Value {
    match raw {
        Some(Value::String(text)) => parse_or_keep(text),
        Some(value) => value.clone(),
        None => Value::Object(Map::new()),
    }
}

fn parse_or_keep(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Object(Map::new());
    }
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

fn name(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

fn whole(map: &Map<String, Value>) -> Vec<ToolCall> {
    if let Some(choices) = map.get("choices").and_then(Value::as_array) {
        let calls = choices
            .first()
            .and_then(|c| c["message"]["tool_calls"].as_array());
        return calls
            .into_iter()
            .flatten()
            .filter_map(|c| {
                let f = &c["function"];
                Some(ToolCall::new(
                    name(&f["name"])?,
                    arguments(f.get("arguments")),
                ))
            })
            .collect();
    }
    if let Some(output) = map.get("output").and_then(Value::as_array) {
        return output
            .iter()
            .filter(|item| item["type"] == "function_call")
            .filter_map(|item| {
                Some(ToolCall::new(
                    name(&item["name"])?,
                    arguments(item.get("arguments")),
                ))
            })
            .collect();
    }
    if let Some(content) = map.get("content").and_then(Value::as_array) {
        return content
            .iter()
            .filter(|block| block["type"] == "tool_use")
            .filter_map(|block| {
                Some(ToolCall::new(
                    name(&block["name"])?,
                    arguments(block.get("input")),
                ))
            })
            .collect();
    }
    Vec::new()
}

/// A call being assembled from a stream: its name and its argument text so far (or, for an
/// Anthropic block that streams no argument text, the block's own `input`).
#[derive(Default)]
struct Partial {
    name: Option<String>,
    text: String,
    given: Option<Value>,
}

impl Partial {
    fn finish(self) -> Option<ToolCall> {
        let args = if self.text.is_empty() {
            self.given.unwrap_or_else(|| Value::Object(Map::new()))
        } else {
            parse_or_keep(&self.text)
        };
        Some(ToolCall::new(self.name?, args))
    }
}

/// A streamed response: each event's `data`, read by the shape it has. Calls are keyed by
/// their index in the response (chat `index`, Anthropic `index`, Responses `output_index`), so
/// they come out in the response's order whatever order their pieces came in.
fn streamed(events: &[Value]) -> Vec<ToolCall> {
    let mut calls: BTreeMap<u64, Partial> = BTreeMap::new();
    for data in events.iter().filter_map(|e| e.get("data")) {
        if let Some(choices) = data.get("choices").and_then(Value::as_array) {
            chat_chunk(choices, &mut calls);
            continue;
        }
        match data["type"].as_str().unwrap_or_default() {
            "content_block_start" if data["content_block"]["type"] == "tool_use" => {
                let at = calls
                    .entry(data["index"].as_u64().unwrap_or(0))
                    .or_default();
                let block = &data["content_block"];
                at.name = name(&block["name"]);
                at.given = block.get("input").cloned();
            }
            "content_block_delta" if data["delta"]["type"] == "input_json_delta" => {
                if let Some(at) = calls.get_mut(&data["index"].as_u64().unwrap_or(0)) {
                    at.text
                        .push_str(data["delta"]["partial_json"].as_str().unwrap_or_default());
                }
            }
            "response.output_item.added" | "response.output_item.done"
                if data["item"]["type"] == "function_call" =>
            {
                let at = calls
                    .entry(data["output_index"].as_u64().unwrap_or(0))
                    .or_default();
                at.name = name(&data["item"]["name"]).or(at.name.take());
                if let Some(text) = data["item"]["arguments"].as_str().filter(|t| !t.is_empty()) {
                    at.text = text.to_string();
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(at) = calls.get_mut(&data["output_index"].as_u64().unwrap_or(0)) {
                    at.text.push_str(data["delta"].as_str().unwrap_or_default());
                }
            }
            "response.function_call_arguments.done" => {
                if let Some(at) = calls.get_mut(&data["output_index"].as_u64().unwrap_or(0)) {
                    if let Some(text) = data["arguments"].as_str() {
                        at.text = text.to_string();
                    }
                }
            }
            _ => {}
        }
    }
    calls.into_values().filter_map(Partial::finish).collect()
}

/// OpenAI chat chunks: choice 0's `delta.tool_calls`, pieces joined by `index`; the name comes
/// with the first piece, the arguments in any number of pieces.
fn chat_chunk(choices: &[Value], calls: &mut BTreeMap<u64, Partial>) {
    let Some(choice) = choices
        .iter()
        .find(|c| c["index"].as_u64().unwrap_or(0) == 0)
    else {
        return;
    };
    for piece in choice["delta"]["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let at = calls
            .entry(piece["index"].as_u64().unwrap_or(0))
            .or_default();
        let f = &piece["function"];
        if let Some(n) = f["name"].as_str().filter(|n| !n.is_empty()) {
            at.name.get_or_insert_with(String::new).push_str(n);
        }
        if let Some(text) = f["arguments"].as_str() {
            at.text.push_str(text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(tool: &str, args: Value) -> ToolCall {
        ToolCall::new(tool, args)
    }

    fn events(data: Vec<Value>) -> Value {
        Value::Array(data.into_iter().map(|d| json!({ "data": d })).collect())
    }

    #[test]
    fn openai_chat_arguments_parsed_or_kept() {
        let response = json!({"choices": [
            {"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "lookup", "arguments": "{\"sku\": \"S-1\", \"n\": 2}"}},
                {"id": "b", "type": "function", "function": {"name": "recommend", "arguments": "not json"}},
                {"id": "c", "type": "function", "function": {"name": "noop", "arguments": ""}}
            ]}},
            {"index": 1, "message": {"tool_calls": [{"function": {"name": "other", "arguments": "{}"}}]}}
        ]});
        assert_eq!(
            tool_calls(&response),
            vec![
                call("lookup", json!({"sku": "S-1", "n": 2})),
                call("recommend", json!("not json")),
                call("noop", json!({})),
            ]
        );
        let plain = json!({"choices": [{"message": {"content": "hello"}}]});
        assert!(tool_calls(&plain).is_empty());
    }

    #[test]
    fn openai_responses_and_anthropic() {
        let responses = json!({"output": [
            {"type": "reasoning", "summary": []},
            {"type": "function_call", "name": "lookup", "arguments": "{\"sku\":\"S-1\"}", "call_id": "x"},
            {"type": "message", "content": [{"type": "output_text", "text": "hi"}]},
            {"type": "function_call", "name": "recommend", "arguments": "{\"price\":899}"}
        ]});
        assert_eq!(
            tool_calls(&responses),
            vec![
                call("lookup", json!({"sku": "S-1"})),
                call("recommend", json!({"price": 899}))
            ]
        );
        let anthropic = json!({"type": "message", "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"sku": "S-1"}}
        ]});
        assert_eq!(
            tool_calls(&anthropic),
            vec![call("lookup", json!({"sku": "S-1"}))]
        );
    }

    #[test]
    fn no_shape_no_calls() {
        for v in [
            json!(null),
            json!("text"),
            json!({"proposals": []}),
            json!([1, 2]),
            json!([{"text": "[DONE]"}]),
        ] {
            assert!(tool_calls(&v).is_empty(), "{v}");
        }
    }

    #[test]
    fn openai_chat_stream_joins_pieces_by_index() {
        let stream = events(vec![
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
                {"index": 0, "id": "a", "type": "function", "function": {"name": "lookup", "arguments": ""}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 1, "id": "b", "type": "function", "function": {"name": "recommend", "arguments": "{\"pri"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "function": {"arguments": "{\"sku\":"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "function": {"arguments": "\"S-1\"}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 1, "function": {"arguments": "ce\": 899}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ]);
        let mut stream = stream;
        stream
            .as_array_mut()
            .unwrap()
            .push(json!({"text": "[DONE]"}));
        assert_eq!(
            tool_calls(&stream),
            vec![
                call("lookup", json!({"sku": "S-1"})),
                call("recommend", json!({"price": 899}))
            ]
        );
    }

    #[test]
    fn anthropic_stream_joins_input_json_deltas() {
        let stream = events(vec![
            json!({"type": "message_start", "message": {"content": []}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t", "name": "lookup", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"sku\": \"S"}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "-1\"}"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "u", "name": "ping", "input": {}}}),
            json!({"type": "message_stop"}),
        ]);
        assert_eq!(
            tool_calls(&stream),
            vec![
                call("lookup", json!({"sku": "S-1"})),
                call("ping", json!({}))
            ]
        );
    }

    #[test]
    fn responses_stream_assembles_by_output_index() {
        let stream = events(vec![
            json!({"type": "response.created", "response": {"output": []}}),
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "function_call", "name": "lookup", "arguments": ""}}),
            json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{\"sku\":"}),
            json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "\"S-1\"}"}),
            json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "function_call", "name": "recommend", "arguments": ""}}),
            json!({"type": "response.function_call_arguments.delta", "output_index": 1, "delta": "{\"price\""}),
            json!({"type": "response.function_call_arguments.done", "output_index": 1, "arguments": "{\"price\": 899}"}),
            json!({"type": "response.output_item.done", "output_index": 1, "item": {"type": "function_call", "name": "recommend", "arguments": "{\"price\": 899}"}}),
            json!({"type": "response.completed", "response": {"output": []}}),
        ]);
        assert_eq!(
            tool_calls(&stream),
            vec![
                call("lookup", json!({"sku": "S-1"})),
                call("recommend", json!({"price": 899}))
            ]
        );
    }

    /// The whole arguments come in either done event, whatever the deltas said, or none came.
    #[test]
    fn responses_stream_takes_the_whole_arguments_of_a_done_event() {
        let stream = events(vec![
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "function_call", "name": "lookup", "arguments": ""}}),
            json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{\"sku\""}),
            json!({"type": "response.function_call_arguments.done", "output_index": 0, "arguments": "{\"sku\": \"S-1\"}"}),
            json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "function_call", "name": "recommend", "arguments": ""}}),
            json!({"type": "response.output_item.done", "output_index": 1, "item": {"type": "function_call", "name": "recommend", "arguments": "{\"price\": 899}"}}),
        ]);
        assert_eq!(
            tool_calls(&stream),
            vec![
                call("lookup", json!({"sku": "S-1"})),
                call("recommend", json!({"price": 899}))
            ]
        );
    }

    /// Only `tool_use` blocks and `function_call` items are calls, and only `input_json_delta`
    /// deltas their argument text: a server tool's block (with a name and streamed input) or an
    /// MCP call item is not.
    #[test]
    fn streams_read_only_the_function_calls() {
        let anthropic = events(vec![
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"query\": \"x\"}"}}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t", "name": "lookup", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"sku\": \"S-1\"}"}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "other_delta", "partial_json": "}"}}),
        ]);
        assert_eq!(
            tool_calls(&anthropic),
            vec![call("lookup", json!({"sku": "S-1"}))]
        );
        let responses = events(vec![
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "mcp_call", "name": "search", "arguments": "{}"}}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "mcp_call", "name": "search", "arguments": "{\"q\": 1}"}}),
        ]);
        assert_eq!(tool_calls(&responses), vec![]);
    }
}
