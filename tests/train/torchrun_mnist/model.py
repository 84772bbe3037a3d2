import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    """Three dense layers, the classic MNIST sample network (smaller)."""

    def __init__(self, input_size=32, layers=(64, 32), classes=5):
        super().__init__()
        self.fc1 = nn.Linear(input_size, layers[0])
        self.fc2 = nn.Linear(layers[0], layers[1])
        self.fc3 = nn.Linear(layers[1], classes)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return F.log_softmax(self.fc3(x), dim=-1)
