"""Local fakes of the providers-II backends: Hindsight and OpenViking HTTP servers on 127.0.0.1, a fake `brv`."""
