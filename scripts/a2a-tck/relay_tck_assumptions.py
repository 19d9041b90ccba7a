"""
A pytest plugin for the A2A TCK's ListTasks tests (scripts/a2a-tck/run.ts --without-kit-assumptions,
docs/a2a.md): it removes two assumptions of the kit's own task helper that A2A 1.0 does not make,
and nothing else.

1. The helper waits for every task it makes to be WORKING. A blocking SendMessage returns the
   task when it is terminal or interrupted (A2A 1.0, SendMessage), so an agent that answers at
   once is COMPLETED: the task is taken as it comes back.
2. The helper makes tasks in contexts it names itself. A server MAY take a client's contextId and
   MUST refuse one it cannot take; Relay refuses (its contexts are sessions). The first task of
   a context the kit names starts a new one, and every later use of that name (in a message or
   a ListTasks filter) is given the id Relay assigned.
"""

_contexts = {}


def pytest_collection_modifyitems(session, config, items):
    import tests.mandatory.protocol.test_tasks_list_method as kit

    send, list_tasks = kit.transport_send_message, kit.transport_list_tasks

    def create_test_task(client, text, context_id=None):
        message = {"messageId": kit.generate_test_message_id("list-test"), "role": "ROLE_USER", "parts": [{"text": text}]}
        if context_id in _contexts:
            message["contextId"] = _contexts[context_id]
        resp = send(client, {"message": message})
        assert kit.is_json_rpc_success_response(resp), f"Task creation failed: {resp}"
        task = resp["result"]["task"]
        if context_id is not None:
            _contexts.setdefault(context_id, task["contextId"])
        return task

    def transport_list_tasks(client, context_id=None, **rest):
        return list_tasks(client, context_id=_contexts.get(context_id, context_id), **rest)

    kit.create_test_task = create_test_task
    kit.transport_list_tasks = transport_list_tasks
