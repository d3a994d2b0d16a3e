#include "StarHarnessClientComponent.h"

#include "Dom/JsonObject.h"
#include "Engine/World.h"
#include "IWebSocket.h"
#include "JsonObjectConverter.h"
#include "Modules/ModuleManager.h"
#include "Serialization/JsonReader.h"
#include "Serialization/JsonSerializer.h"
#include "TimerManager.h"
#include "WebSocketsModule.h"

namespace
{
	constexpr float FirstBackoffSeconds = 0.5f;
	constexpr float MaxBackoffSeconds = 15.f;

	template <typename FrameT>
	bool ToStruct(const TSharedRef<FJsonObject>& Object, FrameT& Frame)
	{
		// Unknown fields are ignored, as the protocol requires of clients.
		return FJsonObjectConverter::JsonObjectToUStruct(Object, &Frame, 0, 0);
	}

	FString FieldAsJson(const TSharedRef<FJsonObject>& Object, const FString& Field)
	{
		const TSharedPtr<FJsonObject>* Value = nullptr;
		if (!Object->TryGetObjectField(Field, Value))
		{
			return TEXT("{}");
		}
		FString Text;
		const TSharedRef<TJsonWriter<>> Writer = TJsonWriterFactory<>::Create(&Text);
		FJsonSerializer::Serialize(Value->ToSharedRef(), Writer);
		return Text;
	}

	// The converter fills each item's Offer from "offer"; whether the item had one at all is
	// set here, since empty terms cannot tell an ordinary reply from an offer.
	void MarkOffers(const TSharedRef<FJsonObject>& Object, FStarHarnessOptions& Frame)
	{
		const TArray<TSharedPtr<FJsonValue>>* Items = nullptr;
		if (!Object->TryGetArrayField(TEXT("items"), Items))
		{
			return;
		}
		for (int32 Index = 0; Index < Items->Num() && Index < Frame.Items.Num(); ++Index)
		{
			const TSharedPtr<FJsonObject>* Item = nullptr;
			Frame.Items[Index].bIsOffer = (*Items)[Index]->TryGetObject(Item)
				&& (*Item)->HasTypedField<EJson::Object>(TEXT("offer"));
		}
	}
}

void UStarHarnessClientComponent::BeginPlay()
{
	Super::BeginPlay();
	if (bConnectOnBeginPlay)
	{
		Connect();
	}
}

void UStarHarnessClientComponent::EndPlay(const EEndPlayReason::Type Reason)
{
	Disconnect();
	Super::EndPlay(Reason);
}

void UStarHarnessClientComponent::Connect()
{
	bStopping = false;
	if (Socket.IsValid())
	{
		Socket->OnClosed().Clear();
		Socket->Close();
	}
	FModuleManager::LoadModuleChecked<FWebSocketsModule>(TEXT("WebSockets"));
	TMap<FString, FString> Headers;
	if (!Token.IsEmpty())
	{
		Headers.Add(TEXT("Authorization"), FString::Printf(TEXT("Bearer %s"), *Token));
	}
	Socket = FWebSocketsModule::Get().CreateWebSocket(Url, FString(), Headers);
	// IWebSocket raises these on the game thread, so handlers may touch UObjects directly.
	Socket->OnConnected().AddUObject(this, &UStarHarnessClientComponent::HandleConnected);
	Socket->OnConnectionError().AddUObject(this, &UStarHarnessClientComponent::HandleConnectionError);
	Socket->OnClosed().AddUObject(this, &UStarHarnessClientComponent::HandleClosed);
	// OnMessage delivers whole text messages (fragments are joined); OnRawMessage would not.
	Socket->OnMessage().AddUObject(this, &UStarHarnessClientComponent::HandleMessage);
	Socket->Connect();
}

void UStarHarnessClientComponent::Disconnect()
{
	bStopping = true;
	if (UWorld* World = GetWorld())
	{
		World->GetTimerManager().ClearTimer(ReconnectTimer);
	}
	if (Socket.IsValid())
	{
		Socket->Close(1000, TEXT("client closing"));
		Socket.Reset();
	}
}

FString UStarHarnessClientComponent::OpenEncounter(const FString& NpcId)
{
	const FString EncounterId = FString::Printf(TEXT("enc-%d"), ++EncountersOpened);
	const TSharedRef<FJsonObject> Frame = MakeShared<FJsonObject>();
	Frame->SetStringField(TEXT("t"), TEXT("encounter.open"));
	Frame->SetStringField(TEXT("id"), EncounterId);
	Frame->SetStringField(TEXT("npcId"), NpcId);
	Frame->SetStringField(TEXT("playerId"), PlayerId);
	SendObject(Frame);
	return EncounterId;
}

FString UStarHarnessClientComponent::OpenScene(const TArray<FString>& NpcIds)
{
	if (NpcIds.Num() == 0)
	{
		return FString();
	}
	const FString EncounterId = FString::Printf(TEXT("enc-%d"), ++EncountersOpened);
	TArray<TSharedPtr<FJsonValue>> Ids;
	for (const FString& NpcId : NpcIds)
	{
		Ids.Add(MakeShared<FJsonValueString>(NpcId));
	}
	const TSharedRef<FJsonObject> Frame = MakeShared<FJsonObject>();
	Frame->SetStringField(TEXT("t"), TEXT("encounter.open"));
	Frame->SetStringField(TEXT("id"), EncounterId);
	Frame->SetStringField(TEXT("npcId"), NpcIds[0]);
	Frame->SetArrayField(TEXT("npcIds"), Ids);
	Frame->SetStringField(TEXT("playerId"), PlayerId);
	if (Revision >= SharedScenesRevision)
	{
		Frame->SetBoolField(TEXT("join"), true);
	}
	SendObject(Frame);
	return EncounterId;
}

void UStarHarnessClientComponent::SayTo(const FString& EncounterId, const FString& NpcId, const FString& Text)
{
	const TSharedRef<FJsonObject> Frame = MakeShared<FJsonObject>();
	Frame->SetStringField(TEXT("t"), TEXT("encounter.say"));
	Frame->SetStringField(TEXT("id"), EncounterId);
	Frame->SetStringField(TEXT("text"), Text);
	Frame->SetStringField(TEXT("to"), NpcId);
	SendObject(Frame);
}

void UStarHarnessClientComponent::Say(const FString& EncounterId, const FString& Text)
{
	const TSharedRef<FJsonObject> Frame = MakeShared<FJsonObject>();
	Frame->SetStringField(TEXT("t"), TEXT("encounter.say"));
	Frame->SetStringField(TEXT("id"), EncounterId);
	Frame->SetStringField(TEXT("text"), Text);
	SendObject(Frame);
}

void UStarHarnessClientComponent::SayOption(const FString& EncounterId, const FString& OptionId)
{
	const TSharedRef<FJsonObject> Frame = MakeShared<FJsonObject>();
	Frame->SetStringField(TEXT("t"), TEXT("encounter.say"));
	Frame->SetStringField(TEXT("id"), EncounterId);
	Frame->SetStringField(TEXT("optionId"), OptionId);
	SendObject(Frame);
}

void UStarHarnessClientComponent::CloseEncounter(const FString& EncounterId)
{
	const TSharedRef<FJsonObject> Frame = MakeShared<FJsonObject>();
	Frame->SetStringField(TEXT("t"), TEXT("encounter.close"));
	Frame->SetStringField(TEXT("id"), EncounterId);
	SendObject(Frame);
}

void UStarHarnessClientComponent::AdvanceWorld(int32 Days)
{
	const TSharedRef<FJsonObject> Frame = MakeShared<FJsonObject>();
	Frame->SetStringField(TEXT("t"), TEXT("world.tick"));
	Frame->SetNumberField(TEXT("days"), Days);
	SendObject(Frame);
}

void UStarHarnessClientComponent::SendObject(const TSharedRef<FJsonObject>& Frame)
{
	if (!Socket.IsValid() || !Socket->IsConnected())
	{
		UE_LOG(LogTemp, Warning, TEXT("star-harness: not connected, frame dropped"));
		return;
	}
	FString Text;
	const TSharedRef<TJsonWriter<TCHAR, TCondensedJsonPrintPolicy<TCHAR>>> Writer =
		TJsonWriterFactory<TCHAR, TCondensedJsonPrintPolicy<TCHAR>>::Create(&Text);
	FJsonSerializer::Serialize(Frame, Writer);
	Socket->Send(Text);
}

void UStarHarnessClientComponent::HandleConnected()
{
	BackoffSeconds = FirstBackoffSeconds;
	const TSharedRef<FJsonObject> Hello = MakeShared<FJsonObject>();
	Hello->SetStringField(TEXT("t"), TEXT("hello"));
	Hello->SetStringField(TEXT("playerId"), PlayerId);
	SendObject(Hello);
}

void UStarHarnessClientComponent::HandleConnectionError(const FString& Error)
{
	UE_LOG(LogTemp, Warning, TEXT("star-harness: cannot connect to %s: %s"), *Url, *Error);
	ScheduleReconnect();
}

void UStarHarnessClientComponent::HandleClosed(int32 StatusCode, const FString& Reason, bool bWasClean)
{
	OnDisconnected.Broadcast(StatusCode, Reason);
	ScheduleReconnect();
}

void UStarHarnessClientComponent::ScheduleReconnect()
{
	UWorld* World = GetWorld();
	if (bStopping || World == nullptr)
	{
		return;
	}
	World->GetTimerManager().SetTimer(
		ReconnectTimer, this, &UStarHarnessClientComponent::Connect, BackoffSeconds, false);
	BackoffSeconds = FMath::Min(BackoffSeconds * 2.f, MaxBackoffSeconds);
}

void UStarHarnessClientComponent::HandleMessage(const FString& Message)
{
	TSharedPtr<FJsonObject> Parsed;
	const TSharedRef<TJsonReader<>> Reader = TJsonReaderFactory<>::Create(Message);
	if (!FJsonSerializer::Deserialize(Reader, Parsed) || !Parsed.IsValid())
	{
		UE_LOG(LogTemp, Warning, TEXT("star-harness: ignored a frame that is not a JSON object"));
		return;
	}
	const TSharedRef<FJsonObject> Object = Parsed.ToSharedRef();
	FString Type;
	Object->TryGetStringField(TEXT("t"), Type);

	if (Type == TEXT("welcome"))
	{
		FStarHarnessWelcome Frame;
		ToStruct(Object, Frame);
		Frame.HudJson = FieldAsJson(Object, TEXT("hud"));
		Revision = Frame.Revision;  // 1 when the server names none
		OnWelcome.Broadcast(Frame);
	}
	else if (Type == TEXT("encounter.opened"))
	{
		FStarHarnessEncounterOpened Frame;
		ToStruct(Object, Frame);
		OnEncounterOpened.Broadcast(Frame);
	}
	else if (Type == TEXT("say.delta"))
	{
		FStarHarnessSayDelta Frame;
		ToStruct(Object, Frame);
		OnSayDelta.Broadcast(Frame);
	}
	else if (Type == TEXT("say.end"))
	{
		FStarHarnessSayEnd Frame;
		ToStruct(Object, Frame);
		OnSayEnd.Broadcast(Frame);
	}
	else if (Type == TEXT("options"))
	{
		FStarHarnessOptions Frame;
		ToStruct(Object, Frame);
		MarkOffers(Object, Frame);
		OnOptions.Broadcast(Frame);
	}
	else if (Type == TEXT("action"))
	{
		FStarHarnessAction Frame;
		ToStruct(Object, Frame);
		Object->TryGetBoolField(TEXT("ok"), Frame.bOk);
		OnAction.Broadcast(Frame);
	}
	else if (Type == TEXT("encounter.idle"))
	{
		FStarHarnessEncounterIdle Frame;
		ToStruct(Object, Frame);
		OnEncounterIdle.Broadcast(Frame);
	}
	else if (Type == TEXT("scene.players"))
	{
		FStarHarnessScenePlayers Frame;
		ToStruct(Object, Frame);
		OnScenePlayers.Broadcast(Frame);
	}
	else if (Type == TEXT("error"))
	{
		FStarHarnessError Frame;
		ToStruct(Object, Frame);
		OnError.Broadcast(Frame);
	}
	else if (Type == TEXT("world.event"))
	{
		FStarHarnessWorldEvent Frame;
		ToStruct(Object, Frame);
		OnWorldEvent.Broadcast(Frame);
	}
	else if (Type == TEXT("hud"))
	{
		FStarHarnessHud Frame;
		ToStruct(Object, Frame);
		Frame.DataJson = FieldAsJson(Object, TEXT("data"));
		OnHud.Broadcast(Frame);
	}
	else
	{
		UE_LOG(LogTemp, Verbose, TEXT("star-harness: no handler for frame type %s"), *Type);
	}
}
